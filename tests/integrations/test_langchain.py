"""The LangChain retriever and tools: evidence as documents, the SPARQL tool's guard."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException

from middleware.errors import BadRequest
from middleware.integrations.langchain import KGRetriever
from middleware.integrations.langchain_tools import KGAskTool, KGSparqlTool, kg_tools
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.registry import build_method
from middleware.server import create_app
from tests.integrations.offline import QUESTION, offline_params, offline_settings, sample_graph

REFUSED = [
    "DROP ALL",
    "INSERT DATA { <http://a> <http://b> <http://c> }",
    "# a comment first\n  delete\twhere { ?s ?p ?o }",
    "SELECT * WHERE { SERVICE <http://169.254.169.254/> { ?s ?p ?o } }",
    "SELECT * WHERE { SERV\\u0049CE <http://10.0.0.1/sparql> { ?s ?p ?o } }",
    "SELECT * WHERE { \\u0053ERVICE <http://10.0.0.1/sparql> { ?s ?p ?o } }",
    "SELECT * WHERE { # \\u000d SERVICE <http://10.0.0.1/> { ?s ?p ?o }\n}",
    "PREFIX m: <http://169.254.169.254/> SELECT * WHERE { SERVICE m:x { ?s ?p ?o } }",
    "SELECT * WHERE { BIND(<http://169.254.169.254/> AS ?e) SERVICE ?e { ?s ?p ?o } }",
    "SELECT * WHERE { " + "{ " * 70 + "?s ?p ?o" + " }" * 70 + " }",
    "not sparql at all",
]


def test_documents_are_the_methods_evidence_paths_with_their_iris() -> None:
    params = offline_params()
    answer = build_method("plan", params["settings"], params["llm"], params["graph"]).run(QUESTION)
    docs = KGRetriever(method="plan", k=4, **params).invoke(QUESTION)
    best = sorted(answer.evidence.paths, key=lambda p: -(p.score or 0.0))  # plan scores all
    assert [d.page_content for d in docs] == [p.text for p in best[:4]]
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)
    first, path = docs[0].metadata, best[0]
    assert first["kind"] == "path" and first["method"] == "plan" and first["source"] == "sample"
    assert first["score"] == pytest.approx(path.score)
    assert first["nodes"] == [n.value for n in path.path.nodes]
    hop = first["hops"][0]
    triple = path.path.hops[0].triple
    assert (hop["subject"], hop["predicate"], hop["object"]) == (
        triple.subject.value,
        triple.predicate.value,
        triple.object.value,
    )
    assert hop["forward"] is path.path.hops[0].forward
    assert hop["subject"].startswith("https://kgmw.dev/metaqa/entity/")


def test_triple_evidence_becomes_documents_without_a_score() -> None:
    params = offline_params()
    docs = KGRetriever(method="qsm", k=3, **params).invoke(QUESTION)
    assert len(docs) == 3
    meta = docs[0].metadata
    assert meta["kind"] == "triple" and meta["method"] == "qsm" and meta["source"] == "sample"
    assert "score" not in meta
    assert meta["predicate"].startswith("https://kgmw.dev/metaqa/")
    assert meta["object_type"] in ("uri", "literal", "bnode")
    assert "James Cameron" in " ".join(d.page_content for d in docs)


def test_k_in_invoke_overrides_the_constructor_and_bad_k_is_refused() -> None:
    retriever = KGRetriever(method="plan", k=5, **offline_params())
    assert len(retriever.invoke(QUESTION, k=2)) == 2
    with pytest.raises(BadRequest, match="k must be"):
        retriever.invoke(QUESTION, k=0)
    with pytest.raises(BadRequest, match="k must be a whole number of at least 1, not -2"):
        KGRetriever(method="plan", k=-2, **offline_params())


async def _both(retriever: KGRetriever) -> tuple[list[Document], list[Document]]:
    return retriever.invoke(QUESTION), await retriever.ainvoke(QUESTION)


async def test_async_retrieval_gives_the_same_documents() -> None:
    sync, asynchronous = await _both(KGRetriever(method="plan", k=3, **offline_params()))
    assert sync == asynchronous and len(sync) == 3


@pytest.mark.parametrize("method", ["io", "cot", "sc"])
def test_a_method_that_collects_no_evidence_is_refused(method: str) -> None:
    with pytest.raises(BadRequest, match=f"{method} collects no graph evidence") as err:
        KGRetriever(method=method, **offline_params())
    assert "plan" in (err.value.hint or "")


def test_an_unknown_method_names_the_known_ones() -> None:
    with pytest.raises(BadRequest, match="unknown method 'nope'") as err:
        KGRetriever(method="nope", **offline_params())
    assert "qsm" in (err.value.hint or "")


def test_ask_tool_answers_with_the_evidence_it_rests_on() -> None:
    tool = KGAskTool(method="plan", **offline_params())
    text = tool.invoke({"question": QUESTION})
    assert text.startswith("Answer: ") and "Titanic" in text.splitlines()[0]
    assert "James Cameron | directed | " in text
    call = {"name": tool.name, "args": {"question": QUESTION}, "id": "1", "type": "tool_call"}
    message = tool.invoke(call)
    assert isinstance(message, ToolMessage)
    assert message.artifact["method"] == "plan" and message.artifact["evidence"]["paths"]


def test_ask_tool_says_when_the_graph_does_not_hold_the_answer() -> None:
    """``qsm`` answering "Avatar" to a question about Aliens: no chain joins them."""
    params = offline_params()
    params["llm"] = ScriptedLLM(default="Avatar")
    tool = KGAskTool(method="qsm", **params)
    call = {"name": tool.name, "args": {"question": "Who directed Aliens?"}, "id": "1"}
    message = tool.invoke({**call, "type": "tool_call"})
    lines = str(message.content).splitlines()
    assert lines[0] == "Answer: not found. The graph does not hold the answer."
    assert lines[1].startswith("Best guess (not supported by the graph): Avatar (confidence ")
    assert message.artifact["answer"] is None and message.artifact["guess"]["answer"] == "Avatar"


def test_ask_tool_reports_bad_input_to_the_agent() -> None:
    tool = KGAskTool(method="plan", **offline_params())
    assert "question" in tool.invoke({"question": "   "}).lower()


def test_sparql_tool_runs_a_read_only_query() -> None:
    tool = KGSparqlTool(**offline_params())
    body = tool.invoke({"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"})
    rows = json.loads(body)["results"]["bindings"]
    assert int(rows[0]["n"]["value"]) > 1000


def test_sparql_tool_caps_rows_as_the_proxy_does() -> None:
    tool = KGSparqlTool(**offline_params(sparql_max_rows=3))
    body = tool.invoke({"query": "SELECT * WHERE { ?s ?p ?o }"})
    head, _, note = body.partition("\n\n")
    assert len(json.loads(head)["results"]["bindings"]) == 3
    assert "cut at 3 rows" in note


def _proxy_refusal(query: str) -> dict[str, Any]:
    app = create_app(offline_settings(), llm=ScriptedLLM(), graphs={"sample": sample_graph()})
    response = app.test_client().get("/sparql", query_string={"query": query})
    assert response.status_code in (400, 413)
    body: dict[str, Any] = response.get_json()
    return body


@pytest.mark.parametrize("query", REFUSED)
def test_sparql_tool_refuses_what_the_proxy_refuses_with_its_message(query: str) -> None:
    refusal = _proxy_refusal(query)
    text = KGSparqlTool(**offline_params()).invoke({"query": query})
    expected = refusal["message"] + (f" ({refusal['hint']})" if "hint" in refusal else "")
    assert text == expected


def test_sparql_tool_can_raise_instead_of_answering_with_the_error() -> None:
    tool = KGSparqlTool(handle_tool_error=False, **offline_params())
    with pytest.raises(ToolException, match="SPARQL updates are not allowed here"):
        tool.invoke({"query": "CLEAR ALL"})


def test_kg_tools_share_one_graph_and_method() -> None:
    ask, sparql = kg_tools(method="qsm", **offline_params())
    assert isinstance(ask, KGAskTool) and isinstance(sparql, KGSparqlTool)
    assert ask.method == "qsm" and ask.graph is sparql.graph
    assert {ask.name, sparql.name} == {"kg_ask", "kg_sparql"}

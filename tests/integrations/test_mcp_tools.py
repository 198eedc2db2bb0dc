"""The MCP tools' calls over the sample graph with a scripted LLM, without the SDK."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from middleware.config import Settings
from middleware.errors import (
    BadRequest,
    EndpointTimeout,
    NotFound,
    QueryTooComplex,
    ReadOnlyViolation,
)
from middleware.integrations.mcp_tools import GraphTools
from middleware.kg.sample import sample_store
from middleware.server.state import ServiceState
from tests.cli_helpers import rok_script

TITANIC = "https://kgmw.dev/metaqa/entity/Titanic"


@pytest.fixture
def tools() -> Iterator[GraphTools]:
    settings = Settings.load(
        config_path=None, env={}, overrides={"progress": False, "llm_cache": False}
    )
    state = ServiceState(settings, llm=rok_script(), graphs={"sample": sample_store()})
    yield GraphTools(state)
    state.close()


def test_ask_answers_with_evidence(tools: GraphTools) -> None:
    answer = tools.ask("Who directed Titanic?")
    assert answer["answer"] == "James Cameron" and answer["method"] == "rok"
    assert answer["evidence"]["paths"] or answer["evidence"]["triples"]


def test_ask_says_in_words_what_the_graph_does_not_hold() -> None:
    """An agent reading the result sees that the graph does not hold the answer and the
    guess labelled as unsupported (``summary``), beside the Answer JSON."""
    settings = Settings.load(
        config_path=None, env={}, overrides={"progress": False, "llm_cache": False}
    )
    llm = rok_script(answer="Ridley Scott")
    state = ServiceState(settings, llm=llm, graphs={"sample": sample_store()})
    try:
        answer = GraphTools(state).ask("Who directed Titanic?")
    finally:
        state.close()
    assert answer["answer"] is None and answer["found"] is False
    assert answer["guess"]["answer"] == "Ridley Scott" and answer["support"] == []
    summary = answer["summary"].splitlines()
    assert summary[0] == "Answer: not found. The graph does not hold the answer."
    assert summary[1].startswith("Best guess (not supported by the graph): Ridley Scott")


def test_a_supported_answer_names_its_support(tools: GraphTools) -> None:
    answer = tools.ask("Who directed Titanic?")
    assert [c["text"] for c in answer["support"]] == ["Titanic | directed by | James Cameron"]
    assert "Supported by:\n- Titanic | directed by | James Cameron" in answer["summary"]


def test_ask_refuses_an_unknown_method(tools: GraphTools) -> None:
    with pytest.raises(BadRequest, match="unknown method"):
        tools.ask("Who directed Titanic?", method="nope")


def test_sparql_select_returns_json_results(tools: GraphTools) -> None:
    found = tools.sparql(f"SELECT ?p ?o WHERE {{ <{TITANIC}> ?p ?o }} LIMIT 3")
    assert found["head"]["vars"] == ["p", "o"]
    assert len(found["results"]["bindings"]) == 3
    assert found["source"] == "sample" and found["truncated"] is False


def test_sparql_ask_and_construct(tools: GraphTools) -> None:
    assert tools.sparql(f"ASK {{ <{TITANIC}> ?p ?o }}")["boolean"] is True
    built = tools.sparql(f"CONSTRUCT {{ <{TITANIC}> ?p ?o }} WHERE {{ <{TITANIC}> ?p ?o }}")
    assert TITANIC in built["triples"]


def test_sparql_keeps_the_proxys_guard(tools: GraphTools) -> None:
    with pytest.raises(ReadOnlyViolation):
        tools.sparql("INSERT DATA { <urn:a> <urn:b> <urn:c> }")
    with pytest.raises(BadRequest, match="SERVICE"):
        tools.sparql("SELECT * { SERVICE <http://10.0.0.1/sparql> { ?s ?p ?o } }")
    deep = "SELECT * WHERE " + "{ " * 100 + "?s ?p ?o" + " }" * 100
    with pytest.raises(QueryTooComplex):
        tools.sparql(deep)


def test_a_stopped_query_does_not_lock_the_mcp_tool_out() -> None:
    """MCP queries have no caller in the penalty box: after one runs to its timeout,
    the next is answered (they used to share one id, all refused for a minute)."""
    settings = Settings.load(
        config_path=None, env={}, overrides={"timeout": 1.0, "sparql_penalty": 60.0}
    )
    state = ServiceState(settings, llm=rok_script(), graphs={"sample": sample_store()})
    tools = GraphTools(state)
    try:
        with pytest.raises(EndpointTimeout):
            tools.sparql("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }")
        assert tools.sparql("ASK { ?s ?p ?o }")["boolean"] is True
    finally:
        state.close()


def test_sparql_caps_rows_at_the_proxy_limit(tools: GraphTools) -> None:
    tools.state.settings = tools.state.settings.replace(sparql_max_rows=2)
    found = tools.sparql("SELECT * WHERE { ?s ?p ?o }")
    assert len(found["results"]["bindings"]) == 2 and found["truncated"] is True


def test_neighbors_by_label_and_iri(tools: GraphTools) -> None:
    by_label = tools.neighbors("Titanic", direction="out", limit=5)
    assert by_label["entity"] == TITANIC and 0 < len(by_label["triples"]) <= 5
    assert all(t["subject"]["value"] == TITANIC for t in by_label["triples"])
    assert by_label["triples"][0]["text"].startswith("Titanic")
    assert tools.neighbors(TITANIC)["entity"] == TITANIC


def test_neighbors_refuses_bad_input(tools: GraphTools) -> None:
    with pytest.raises(BadRequest, match="direction"):
        tools.neighbors("Titanic", direction="up")
    with pytest.raises(BadRequest, match="limit"):
        tools.neighbors("Titanic", limit=0)
    with pytest.raises(NotFound, match="no entity"):
        tools.neighbors("zzqx no such film")
    with pytest.raises(NotFound, match="no source"):
        tools.neighbors("Titanic", source="elsewhere")


def test_paths_between_labels(tools: GraphTools) -> None:
    found = tools.paths("Titanic", "Kate Winslet", max_hops=1)
    assert found["a"] == TITANIC and found["paths"]
    assert "Kate Winslet" in found["paths"][0]["text"]
    with pytest.raises(BadRequest, match="max_hops"):
        tools.paths("Titanic", "Kate Winslet", max_hops=4)


def test_link_ranks_entities(tools: GraphTools) -> None:
    found = tools.link("kate winslet", limit=3)
    assert found["entities"][0]["label"].lower() == "kate winslet"
    assert len(found["entities"]) <= 3


def test_resources_list_sources_and_profiles(tools: GraphTools) -> None:
    sources = tools.sources()["sources"]
    assert sources[0]["name"] == "sample" and sources[0]["default"] is True
    names = [p["name"] for p in tools.profiles()["profiles"]]
    assert "metaqa" in names and "generic" in names

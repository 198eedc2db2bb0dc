"""The LlamaIndex retriever: evidence as scored nodes, sync and async, in a query engine."""

from __future__ import annotations

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from middleware.errors import BadRequest
from middleware.integrations.langchain import KGRetriever as LangChainRetriever
from middleware.integrations.llamaindex import KGRetriever
from tests.integrations.offline import QUESTION, offline_params


def test_nodes_carry_the_same_text_and_metadata_as_langchain_documents() -> None:
    params = offline_params()
    nodes = KGRetriever(method="plan", similarity_top_k=3, **params).retrieve(QUESTION)
    docs = LangChainRetriever(method="plan", k=3, **params).invoke(QUESTION)
    assert len(nodes) == 3 and all(isinstance(n, NodeWithScore) for n in nodes)
    assert all(isinstance(n.node, TextNode) for n in nodes)
    assert [n.node.get_content() for n in nodes] == [d.page_content for d in docs]
    assert [n.node.metadata for n in nodes] == [d.metadata for d in docs]
    assert [n.score for n in nodes] == [d.metadata["score"] for d in docs]


def test_node_ids_are_stable_for_the_same_evidence() -> None:
    retriever = KGRetriever(method="plan", similarity_top_k=2, **offline_params())
    first, again = retriever.retrieve(QUESTION), retriever.retrieve(QUESTION)
    assert [n.node.node_id for n in first] == [n.node.node_id for n in again]
    assert len({n.node.node_id for n in first}) == 2


async def test_async_retrieval_gives_the_same_nodes() -> None:
    retriever = KGRetriever(method="plan", similarity_top_k=3, **offline_params())
    nodes = await retriever.aretrieve(QueryBundle(QUESTION))
    assert [n.node.get_content() for n in nodes] == [
        n.node.get_content() for n in retriever.retrieve(QUESTION)
    ]


def test_triple_evidence_has_no_score() -> None:
    nodes = KGRetriever(method="qsm", similarity_top_k=2, **offline_params()).retrieve(QUESTION)
    assert len(nodes) == 2 and all(n.score is None for n in nodes)
    assert nodes[0].node.metadata["kind"] == "triple"


def test_a_method_without_evidence_is_refused() -> None:
    with pytest.raises(BadRequest, match="io collects no graph evidence"):
        KGRetriever(method="io", **offline_params())


def test_a_query_engine_answers_from_the_graph_evidence() -> None:
    retriever = KGRetriever(method="plan", similarity_top_k=3, **offline_params())
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = engine.query(QUESTION)
    assert [n.node.get_content() for n in response.source_nodes] == [
        n.node.get_content() for n in retriever.retrieve(QUESTION)
    ]
    assert "James Cameron | directed | " in str(response)  # MockLLM echoes its prompt

"""LangChain's own standard retriever tests (langchain-tests) over the sample graph."""

from __future__ import annotations

from typing import Any

from langchain_tests.integration_tests import RetrieversIntegrationTests

from middleware.integrations.langchain import KGRetriever
from tests.integrations.offline import QUESTION, offline_params


class TestKGRetrieverLangChainStandard(RetrieversIntegrationTests):
    """The ``plan`` method collects evidence with no LLM call, so this runs offline."""

    @property
    def retriever_constructor(self) -> type[KGRetriever]:
        return KGRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"method": "plan", "k": 2, **offline_params()}

    @property
    def retriever_query_example(self) -> str:
        return QUESTION

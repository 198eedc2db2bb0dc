"""A LangChain retriever of graph evidence: ``KGRetriever`` (the ``langchain`` extra).

It runs any registered method that collects evidence (``plan`` by default: no LLM
call when its plan is confident) and returns one ``Document`` per evidence path or
triple, in the method's order: ``page_content`` is the verbalized path or triple,
``metadata`` names its IRIs (``hops`` of a path, ``subject``/``predicate``/``object``
of a triple), ``source``, ``method`` and ``score`` where the method gives one.
``k`` (constructor, or ``invoke(query, k=...)``) caps how many.

>>> from middleware.llm.scripted import ScriptedLLM
>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nCollateral|directed_by|Michael Mann\\n", name="kb.txt")
>>> retriever = KGRetriever(graph=kg, llm=ScriptedLLM(), settings=Settings.build({"encoder": "hash"}), k=1)
>>> [doc] = retriever.invoke("Which films did Michael Mann direct?")
>>> doc.page_content, doc.metadata["kind"], doc.metadata["hops"][0]["predicate"]
('Michael Mann | directed | Collateral', 'path', 'https://kgmw.dev/metaqa/relation/directed_by')
"""

from __future__ import annotations

from typing import Any

from middleware.config import Settings
from middleware.integrations.extras import missing_extra
from middleware.integrations.runner import MethodRunner, check_k
from middleware.kg.operations import GraphOperations
from middleware.llm.base import LLM

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, PrivateAttr
except ModuleNotFoundError as err:  # the langchain extra is missing
    raise missing_extra("langchain", err) from err


class KGRetriever(BaseRetriever):
    """Evidence documents from a registered method over a knowledge graph.

    ``graph``, ``llm`` and ``settings`` default to what ``kgmw`` would open (config
    file and environment; the sample graph when no store or endpoint is set).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    method: str = "plan"
    k: int = 4
    graph: GraphOperations | None = None
    llm: LLM | None = None
    settings: Settings | None = None
    _runner: MethodRunner = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        check_k(self.k)
        self._runner = MethodRunner(
            self.method,
            graph=self.graph,
            llm=self.llm,
            settings=self.settings,
            require_evidence=True,
        )

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[Document]:
        records = self._runner.records(query, self.k if k is None else k)
        return [Document(r.text, metadata=r.metadata, id=r.key) for r in records]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[Document]:
        records = await self._runner.arecords(query, self.k if k is None else k)
        return [Document(r.text, metadata=r.metadata, id=r.key) for r in records]

"""A LlamaIndex retriever of graph evidence: ``KGRetriever`` (the ``llamaindex`` extra).

The same evidence as the LangChain retriever (``middleware.integrations.langchain``):
one ``TextNode`` per evidence path or triple, in the method's order, its text the
verbalized path or triple and its metadata the same IRIs, source, method and score;
the ``NodeWithScore``'s score is the method's where it gives one, else None. Only
``source`` is shown to an LLM or an embedder with a node's text (the IRIs stay in the
metadata). ``similarity_top_k`` caps how many; plug it into a ``RetrieverQueryEngine``.

>>> from middleware.llm.scripted import ScriptedLLM
>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nCollateral|directed_by|Michael Mann\\n", name="kb.txt")
>>> retriever = KGRetriever(graph=kg, llm=ScriptedLLM(), settings=Settings.build({"encoder": "hash"}))
>>> [node.get_content() for node in retriever.retrieve("Which films did Michael Mann direct?")]
['Michael Mann | directed | Collateral', 'Michael Mann | directed | Heat']
"""

from __future__ import annotations

from middleware.config import Settings
from middleware.integrations.extras import missing_extra
from middleware.integrations.records import EvidenceRecord
from middleware.integrations.runner import MethodRunner, check_k
from middleware.kg.operations import GraphOperations
from middleware.llm.base import LLM

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ModuleNotFoundError as err:  # the llamaindex extra is missing
    raise missing_extra("llamaindex", err) from err

SHOWN_KEYS = ("source",)  # metadata an LLM or embedder sees with a node's text


class KGRetriever(BaseRetriever):
    """Evidence nodes from a registered method (``plan`` by default) over a graph.

    ``graph``, ``llm`` and ``settings`` default to what ``kgmw`` would open (config
    file and environment; the sample graph when no store or endpoint is set).
    """

    def __init__(
        self,
        method: str = "plan",
        *,
        graph: GraphOperations | None = None,
        llm: LLM | None = None,
        settings: Settings | None = None,
        similarity_top_k: int = 4,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        super().__init__(callback_manager=callback_manager)
        self.similarity_top_k = check_k(similarity_top_k)
        self._runner = MethodRunner(
            method, graph=graph, llm=llm, settings=settings, require_evidence=True
        )

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        records = self._runner.records(query_bundle.query_str, self.similarity_top_k)
        return [NodeWithScore(node=_node(r), score=r.score) for r in records]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        records = await self._runner.arecords(query_bundle.query_str, self.similarity_top_k)
        return [NodeWithScore(node=_node(r), score=r.score) for r in records]


def _node(record: EvidenceRecord) -> TextNode:
    hidden = [key for key in record.metadata if key not in SHOWN_KEYS]
    return TextNode(
        id_=record.key,
        text=record.text,
        metadata=record.metadata,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=hidden,
    )

"""Methods by name, built from settings: what the CLI and the service share."""

from __future__ import annotations

from middleware.config import Settings
from middleware.config.methods import PseudoGraphSettings, QSMSettings, RoKSettings
from middleware.errors import BadRequest
from middleware.kg.base import KnowledgeGraph
from middleware.llm.base import LLM
from middleware.methods.base import Method
from middleware.methods.baselines import IO, CoT
from middleware.methods.pseudograph import PseudoGraph
from middleware.methods.qsm import QSM
from middleware.methods.rok import RoK
from middleware.text.embeddings.factory import open_encoder
from middleware.text.linking import EntityLinker

METHODS: dict[str, str] = {
    "rok": "RoK: key entities, PageRank-ranked paths, one neighbour filter; 3-4 LLM calls",
    "pg": "Pseudo-graph: the LLM drafts Cypher, it is checked against matched graph triples, fixed, answered; 3 LLM calls, several sources at once",
    "qsm": "QSM baseline: the question matched against its entities' neighbour triples; 1 LLM call",
    "io": "IO baseline: the question alone; 1 LLM call",
    "cot": "CoT baseline: step-by-step reasoning, then the answer; 1 LLM call",
}


def build_method(name: str, settings: Settings, llm: LLM, graph: KnowledgeGraph) -> Method:
    """The method ``name`` over ``graph`` with ``llm``, configured by ``settings``."""
    key = name.strip().lower()
    if key == "rok":
        return RoK(
            llm,
            graph,
            config=settings.table(RoKSettings),
            linker=EntityLinker(graph, fuzzy_cutoff=settings.fuzzy_cutoff),
            literal_max_chars=settings.literal_max_chars,
        )
    if key == "pg":
        return PseudoGraph(
            llm,
            graph,
            encoder=open_encoder(settings),
            config=settings.table(PseudoGraphSettings),
            fuzzy_cutoff=settings.fuzzy_cutoff,
            literal_max_chars=settings.literal_max_chars,
        )
    if key == "qsm":
        qsm = settings.table(QSMSettings)
        return QSM(
            llm,
            graph,
            encoder=open_encoder(settings),
            top_k=qsm.top_k,
            neighbors_per_entity=qsm.neighbors_per_entity,
            max_entities=qsm.max_entities,
            fuzzy_cutoff=settings.fuzzy_cutoff,
        )
    if key == "io":
        return IO(llm, graph)
    if key == "cot":
        return CoT(llm, graph)
    raise BadRequest(f"unknown method {name!r}", hint=f"known methods: {', '.join(METHODS)}")

"""Methods by name, built from settings: what the CLI and the service share."""

from __future__ import annotations

from middleware.errors import BadRequest
from middleware.kg.base import KnowledgeGraph
from middleware.linking import EntityLinker
from middleware.llm.base import LLM
from middleware.methods.base import Method
from middleware.methods.baselines import IO, CoT
from middleware.methods.rok import RoK, RoKConfig
from middleware.settings import Settings

METHODS: dict[str, str] = {
    "rok": "RoK: key entities, PageRank-ranked paths, one neighbour filter; 3-4 LLM calls",
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
            config=RoKConfig.from_settings(settings),
            linker=EntityLinker(graph, fuzzy_cutoff=settings.fuzzy_cutoff),
            literal_max_chars=settings.literal_max_chars,
        )
    if key == "io":
        return IO(llm, graph)
    if key == "cot":
        return CoT(llm, graph)
    raise BadRequest(f"unknown method {name!r}", hint=f"known methods: {', '.join(METHODS)}")

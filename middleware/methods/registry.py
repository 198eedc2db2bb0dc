"""Methods by name, built from settings: what the CLI, the service and eval share.

A method is registered by one ``MethodSpec``: its name, a one-line description, its
settings table, whether it takes several sources, whether it collects graph evidence
(the baselines do not), and how to build it. Everything
that lists methods (``kgmw ask --method``, ``/v1/models``, eval, the conformance
suite in ``middleware/testing``) reads ``METHODS`` and ``SPECS``, so a new method gets
all of them, its tests included, by being registered here.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, cast

from middleware.config import Settings
from middleware.config.methods import (
    KSLSettings,
    MethodTable,
    PlanSettings,
    PseudoGraphSettings,
    QSMSettings,
    ReachSettings,
    RoKSettings,
    SCSettings,
)
from middleware.errors import BadRequest, ConfigError
from middleware.kg.base import KnowledgeGraph
from middleware.llm.base import LLM
from middleware.methods.baselines import IO, CoT
from middleware.methods.ksl import KnowledgeSolver
from middleware.methods.method import Method, MethodBase
from middleware.methods.plan import Plan
from middleware.methods.pseudograph import PseudoGraph
from middleware.methods.qsm import QSM
from middleware.methods.reachable import Reachable
from middleware.methods.rok import RoK
from middleware.methods.run import AnswerPolicy
from middleware.methods.sc import SelfConsistency
from middleware.methods.with_plan import PlanAware, WithPlan, takes_planning
from middleware.planning.relation_fit import RelationFit
from middleware.text.embeddings.encoders import Encoder
from middleware.text.embeddings.factory import open_encoder
from middleware.text.verbalize import Verbalizer


@dataclass
class SharedEncoder:
    """One encoder for every method that needs one, opened on first use.

    A workspace hands its own to every method it builds; ``build_method`` without one
    opens one per call, shared by the method and its planner.
    """

    settings: Settings
    _encoder: Encoder | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self) -> Encoder:
        with self._lock:
            if self._encoder is None:
                self._encoder = open_encoder(self.settings)
            return self._encoder


@dataclass(frozen=True)
class MethodParts:
    """What a method is built from: its settings, LLM, graph and the shared encoder."""

    settings: Settings
    llm: LLM
    graph: KnowledgeGraph | None
    encoder: Callable[[], Encoder]

    @property
    def shared(self) -> dict[str, Any]:
        """What every method takes from the settings: text settings, answer policy."""
        return {"text": self.settings, "policy": AnswerPolicy.from_settings(self.settings)}


Builder = Callable[[MethodParts], Method]


@dataclass(frozen=True)
class MethodSpec:
    name: str
    description: str
    build: Builder
    table: type[MethodTable] | None = None
    multi_source: bool = True
    collects_evidence: bool = True  # False: the answer's evidence is always empty


def _plan(parts: MethodParts) -> Plan:
    settings = parts.settings
    return Plan(
        parts.llm,
        parts.graph,
        encoder=parts.encoder(),
        config=settings.table(PlanSettings),
        cache_dir=settings.cache_dir,
        **parts.shared,
    )


def _rok_config(settings: Settings) -> RoKSettings:
    """The rok table, reading as many paths per pair and triples per entity as the
    graph's own limits (settings ``paths_limit``, ``neighbors_limit``)."""
    config = settings.table(RoKSettings)
    return replace(
        config,
        paths_per_pair=config.paths_per_pair or settings.paths_limit,
        neighbors_per_entity=config.neighbors_per_entity or settings.neighbors_limit,
    )


def _ksl_config(settings: Settings) -> KSLSettings:
    """The ksl table with ``few_shot`` decided: ``auto`` is off for a tuned adapter."""
    config = settings.table(KSLSettings)
    if config.few_shot != "auto":
        return config
    tuned = settings.llm == "transformers" and bool(settings.llm_adapter)
    return replace(config, few_shot="off" if tuned else "on")


def _ksl(parts: MethodParts) -> Method:
    return KnowledgeSolver(
        parts.llm,
        parts.graph,
        encoder=parts.encoder(),
        config=_ksl_config(parts.settings),
        **parts.shared,
    )


def _with_plan(base: Builder) -> Builder:
    """``base``'s method given the planner's step: the one ``+plan`` combinator."""

    def build(parts: MethodParts) -> Method:
        inner = base(parts)
        if not takes_planning(inner):
            raise ConfigError(
                f"method {inner.name!r} takes no planning stage, so it has no +plan variant",
                hint="give its answer a `planning: PlanningStage | None = None` parameter",
            )
        return WithPlan(cast(PlanAware, inner), _plan(parts))

    return build


SPECS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "rok",
        "RoK: key entities, PageRank-ranked paths, one neighbour filter; 3-4 LLM calls",
        lambda p: RoK(p.llm, p.graph, config=_rok_config(p.settings), **p.shared),
        RoKSettings,
        multi_source=False,
    ),
    MethodSpec(
        "pg",
        "Pseudo-graph: the LLM drafts Cypher, it is checked against matched graph triples, fixed, answered; 3 LLM calls, several sources at once",
        lambda p: PseudoGraph(
            p.llm,
            p.graph,
            encoder=p.encoder(),
            config=p.settings.table(PseudoGraphSettings),
            **p.shared,
        ),
        PseudoGraphSettings,
    ),
    MethodSpec(
        "qsm",
        "QSM baseline: the question matched against its entities' neighbour triples; 1 LLM call",
        lambda p: QSM(
            p.llm, p.graph, encoder=p.encoder(), config=p.settings.table(QSMSettings), **p.shared
        ),
        QSMSettings,
    ),
    MethodSpec(
        "plan",
        "Plan: relation paths voted by learned questions (kgmw learn) or ranked zero-shot, walked in the graph; 0-1 LLM calls",
        _plan,
        PlanSettings,
    ),
    MethodSpec(
        "ksl",
        "Knowledge Solver: the LLM walks the graph hop by hop, picking among real neighbours; at most ksl_rounds + 1 LLM calls",
        _ksl,
        KSLSettings,
    ),
    MethodSpec(
        "ksl+plan",
        "Knowledge Solver guided by planned relation paths: planned steps offered first (only they when the plan is confident)",
        _with_plan(_ksl),
        KSLSettings,
        multi_source=False,
    ),
    MethodSpec(
        "reach",
        "Reach baseline (multiple choice): a seeded random choice among those a short path joins to the question; 0 LLM calls",
        lambda p: Reachable(p.llm, p.graph, config=p.settings.table(ReachSettings), **p.shared),
        ReachSettings,
    ),
    MethodSpec(
        "io",
        "IO baseline: the question alone; 1 LLM call",
        lambda p: IO(p.llm, p.graph, **p.shared),
        collects_evidence=False,
    ),
    MethodSpec(
        "cot",
        "CoT baseline: step-by-step reasoning, then the answer; 1 LLM call",
        lambda p: CoT(p.llm, p.graph, **p.shared),
        collects_evidence=False,
    ),
    MethodSpec(
        "sc",
        "Self-consistency baseline: k sampled CoT answers (seeded), majority vote; k LLM calls (sc_samples), one more only to pick a choice none named",
        lambda p: SelfConsistency(p.llm, p.graph, config=p.settings.table(SCSettings), **p.shared),
        SCSettings,
        collects_evidence=False,
    ),
)
_PLANNED = ("rok", "pg", "qsm")
SPECS += tuple(
    MethodSpec(
        f"{spec.name}+plan",
        f"{spec.name} with the planner's walks as its first evidence",
        _with_plan(spec.build),
        spec.table,
        multi_source=False,
    )
    for spec in SPECS
    if spec.name in _PLANNED
)
METHODS: dict[str, str] = {spec.name: spec.description for spec in SPECS}


def method_spec(name: str) -> MethodSpec:
    """The registration of method ``name``; an unknown name lists the known ones."""
    key = name.strip().lower()
    for spec in SPECS:
        if spec.name == key:
            return spec
    near = difflib.get_close_matches(key, list(METHODS), n=1, cutoff=0.6)
    guess = f"did you mean {near[0]!r}? " if near else ""
    raise BadRequest(f"unknown method {name!r}", hint=f"{guess}known methods: {', '.join(METHODS)}")


def build_method(
    name: str,
    settings: Settings,
    llm: LLM,
    graph: KnowledgeGraph | None,
    *,
    encoder: Callable[[], Encoder] | None = None,
) -> Method:
    """The method ``name`` over ``graph`` with ``llm``, configured by ``settings``;
    ``encoder`` gives the shared encoder (default: one opened for this method)."""
    parts = MethodParts(settings, llm, graph, encoder or SharedEncoder(settings))
    method = method_spec(name).build(parts)
    if isinstance(method, MethodBase) and method.graph_method:
        method.use_relation_fit(relation_fits(parts))
    return method


def relation_fits(parts: MethodParts) -> Callable[[KnowledgeGraph], RelationFit]:
    """One ``RelationFit`` per graph, over the shared encoder (opened on first use)."""
    made: dict[int, RelationFit] = {}
    lock = threading.Lock()

    def fit_for(graph: KnowledgeGraph) -> RelationFit:
        with lock:
            if id(graph) not in made:
                verbalizer = Verbalizer(graph, literal_max_chars=parts.settings.literal_max_chars)
                made[id(graph)] = RelationFit(parts.encoder, verbalizer)
            return made[id(graph)]

    return fit_for

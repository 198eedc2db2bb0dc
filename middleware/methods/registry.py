"""Methods by name, built from settings: what the CLI, the service and eval share.

A method is registered by one ``MethodSpec``: its name, a one-line description, its
settings table, whether it takes several sources, whether it collects graph evidence
(the baselines do not), and how to build it. Everything
that lists methods (``kgmw ask --method``, ``/v1/models``, eval, the conformance
suite in ``middleware/testing``) reads ``METHODS`` and ``SPECS``, so a new method gets
all of them, its tests included, by being registered here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

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
from middleware.errors import BadRequest
from middleware.kg.base import KnowledgeGraph
from middleware.llm.base import LLM
from middleware.methods.baselines import IO, CoT
from middleware.methods.ksl import KnowledgeSolver
from middleware.methods.method import Method, MethodBase
from middleware.methods.plan import Plan
from middleware.methods.planned import WithPlan
from middleware.methods.pseudograph import PseudoGraph
from middleware.methods.qsm import QSM
from middleware.methods.reachable import Reachable
from middleware.methods.rok import RoK
from middleware.methods.run import AnswerPolicy
from middleware.methods.sc import SelfConsistency
from middleware.text.embeddings.factory import open_encoder

Builder = Callable[[Settings, LLM, KnowledgeGraph | None], Method]


@dataclass(frozen=True)
class MethodSpec:
    name: str
    description: str
    build: Builder
    table: type[MethodTable] | None = None
    multi_source: bool = True
    collects_evidence: bool = True  # False: the answer's evidence is always empty


def _policy(settings: Settings) -> AnswerPolicy:
    return AnswerPolicy.from_settings(settings)


def _plan(settings: Settings, llm: LLM, graph: KnowledgeGraph | None) -> Plan:
    return Plan(
        llm,
        graph,
        encoder=open_encoder(settings),
        config=settings.table(PlanSettings),
        cache_dir=settings.cache_dir,
        text=settings,
        policy=_policy(settings),
    )


def _ksl_config(settings: Settings) -> KSLSettings:
    """The ksl table with ``few_shot`` decided: ``auto`` is off for a tuned adapter."""
    config = settings.table(KSLSettings)
    if config.few_shot != "auto":
        return config
    tuned = settings.llm == "transformers" and bool(settings.llm_adapter)
    return replace(config, few_shot="off" if tuned else "on")


def _ksl(settings: Settings, llm: LLM, graph: KnowledgeGraph | None, *, plan: bool) -> Method:
    return KnowledgeSolver(
        llm,
        graph,
        encoder=open_encoder(settings),
        config=_ksl_config(settings),
        planner=_plan(settings, llm, graph) if plan else None,
        text=settings,
        policy=_policy(settings),
    )


def _with_plan(base: Builder) -> Builder:
    def build(settings: Settings, llm: LLM, graph: KnowledgeGraph | None) -> Method:
        inner = base(settings, llm, graph)
        assert isinstance(inner, MethodBase)
        return WithPlan(inner, _plan(settings, llm, graph))

    return build


SPECS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "rok",
        "RoK: key entities, PageRank-ranked paths, one neighbour filter; 3-4 LLM calls",
        lambda s, llm, g: RoK(llm, g, config=s.table(RoKSettings), text=s, policy=_policy(s)),
        RoKSettings,
        multi_source=False,
    ),
    MethodSpec(
        "pg",
        "Pseudo-graph: the LLM drafts Cypher, it is checked against matched graph triples, fixed, answered; 3 LLM calls, several sources at once",
        lambda s, llm, g: PseudoGraph(
            llm,
            g,
            encoder=open_encoder(s),
            config=s.table(PseudoGraphSettings),
            text=s,
            policy=_policy(s),
        ),
        PseudoGraphSettings,
    ),
    MethodSpec(
        "qsm",
        "QSM baseline: the question matched against its entities' neighbour triples; 1 LLM call",
        lambda s, llm, g: QSM(
            llm, g, encoder=open_encoder(s), config=s.table(QSMSettings), text=s, policy=_policy(s)
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
        lambda s, llm, g: _ksl(s, llm, g, plan=False),
        KSLSettings,
    ),
    MethodSpec(
        "ksl+plan",
        "Knowledge Solver guided by planned relation paths: planned steps offered first (only they when the plan is confident)",
        lambda s, llm, g: _ksl(s, llm, g, plan=True),
        KSLSettings,
        multi_source=False,
    ),
    MethodSpec(
        "reach",
        "Reach baseline (multiple choice): a seeded random choice among those a short path joins to the question; 0 LLM calls",
        lambda s, llm, g: Reachable(
            llm, g, config=s.table(ReachSettings), text=s, policy=_policy(s)
        ),
        ReachSettings,
    ),
    MethodSpec(
        "io",
        "IO baseline: the question alone; 1 LLM call",
        lambda s, llm, g: IO(llm, g, text=s, policy=_policy(s)),
        collects_evidence=False,
    ),
    MethodSpec(
        "cot",
        "CoT baseline: step-by-step reasoning, then the answer; 1 LLM call",
        lambda s, llm, g: CoT(llm, g, text=s, policy=_policy(s)),
        collects_evidence=False,
    ),
    MethodSpec(
        "sc",
        "Self-consistency baseline: k sampled CoT answers (seeded), majority vote; k LLM calls (sc_samples), one more only to pick a choice none named",
        lambda s, llm, g: SelfConsistency(
            llm, g, config=s.table(SCSettings), text=s, policy=_policy(s)
        ),
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
    raise BadRequest(f"unknown method {name!r}", hint=f"known methods: {', '.join(METHODS)}")


def build_method(name: str, settings: Settings, llm: LLM, graph: KnowledgeGraph | None) -> Method:
    """The method ``name`` over ``graph`` with ``llm``, configured by ``settings``."""
    return method_spec(name).build(settings, llm, graph)

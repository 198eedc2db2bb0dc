"""The ``+plan`` combinator (``rok+plan``, ``pg+plan``, ``qsm+plan``, ``ksl+plan``): one
planning stage, handed to the method it wraps.

``WithPlan`` answers with the wrapped method, giving it a ``PlanningStage``: the
planner's step (``plan``) for this run, taken once, when the method first asks for it.
What a method makes of it is its own choice:

- ``rok``, ``pg`` and ``qsm`` ask at once for the ``prior`` evidence: the planned walks,
  which the shared final stages (``steps.py``) put before the method's own facts,
  ground answers in and keep in the Answer; the entities the best plan reaches become
  the options of the final call, a constrained choice with every fact in the prompt.
- ``ksl`` asks after linking, and walks with a guide read from the planning
  (``ksl/guide.py``).

The variant is registered under its own name, so evaluation reports it apart from the
plain method.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Protocol

from middleware.config.areas import TextSettings
from middleware.config.methods import PlanSettings
from middleware.kg.base import KnowledgeGraph
from middleware.llm.base import LLM
from middleware.methods.answer import Answer
from middleware.methods.method import MethodBase
from middleware.methods.plan import Plan, plan_evidence
from middleware.methods.run import AnswerPolicy, PriorEvidence, Run
from middleware.planning.planner import Planner
from middleware.planning.plans import Planning


class PlanningStage:
    """The planner's step of one run, taken once, when first asked for."""

    def __init__(self, plan: Plan, run: Run) -> None:
        self._plan = plan
        self._run = run
        self._taken: tuple[Planner, Planning] | None = None

    @property
    def config(self) -> PlanSettings:
        return self._plan.config

    def planning(self) -> tuple[Planner, Planning]:
        """The planner over the run's graph and its planning (step ``plan``)."""
        if self._taken is None:
            self._taken = self._plan.plan_step(self._run)
        return self._taken

    def prior(self) -> PriorEvidence | None:
        """The planned walks as evidence found before the method's own, with the names
        of the entities the best plans reach; None when no walk reached anything."""
        planner, planning = self.planning()
        evidence = plan_evidence(planning, planner.verbalizer)
        if not evidence:
            return None
        best = planning.answers()[: self.config.answer_items]
        planner.verbalizer.prepare(best)
        names = list(dict.fromkeys(planner.verbalizer.name(n) for n in best))
        iris = [n.value for n in best]
        return PriorEvidence(
            [p.text for p in evidence.paths], evidence, names, planning.confidence, iris
        )


class PlanAware(Protocol):
    """A method that can take a planning stage (``rok``, ``pg``, ``qsm``, ``ksl``)."""

    name: str
    llm: LLM
    graph: KnowledgeGraph | None
    text: TextSettings
    policy: AnswerPolicy

    def answer(self, run: Run, planning: PlanningStage | None = None) -> Answer: ...

    def use_source_settings(self, text_of: Callable[[KnowledgeGraph], TextSettings]) -> None: ...


def takes_planning(method: object) -> bool:
    """Whether ``method``'s ``answer`` takes a planning stage (``answer(run, planning)``)."""
    if not isinstance(method, MethodBase):
        return False
    return "planning" in inspect.signature(method.answer).parameters


class WithPlan(MethodBase):
    """``inner`` answering with the planner's step of ``plan`` handed to it."""

    multi_source = False  # a path memory belongs to one source

    def __init__(self, inner: PlanAware, plan: Plan) -> None:
        super().__init__(inner.llm, inner.graph, text=inner.text, policy=inner.policy)
        self.inner = inner
        self.plan = plan
        self.name = f"{inner.name}+plan"

    def use_source_settings(self, text_of: Callable[[KnowledgeGraph], TextSettings]) -> None:
        super().use_source_settings(text_of)
        self.inner.use_source_settings(text_of)
        self.plan.use_source_settings(text_of)

    def answer(self, run: Run) -> Answer:
        return self.inner.answer(run, PlanningStage(self.plan, run))

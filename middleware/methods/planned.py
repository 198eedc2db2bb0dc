"""A method with the planner as its first retriever (``rok+plan``, ``pg+plan``, ``qsm+plan``).

The planner runs first (step ``plan``); its walks become the run's prior evidence,
which the shared final stages put before the method's own facts, ground answers in
and keep in the Answer, and the entities the best plan reaches become the options of
the final call: a constrained choice, with every fact in the prompt. Then the method
runs as it always does. The variant is
registered under its own name, so evaluation reports it apart from the plain method.
"""

from __future__ import annotations

from middleware.methods.answer import Answer
from middleware.methods.method import MethodBase
from middleware.methods.plan import Plan, plan_evidence
from middleware.methods.run import PriorEvidence, Run


class WithPlan(MethodBase):
    """``inner`` answering with the planned paths of ``planner`` as its first evidence."""

    multi_source = False  # a path memory belongs to one source

    def __init__(self, inner: MethodBase, planner: Plan) -> None:
        super().__init__(inner.llm, inner.graph, text=inner.text, policy=inner.policy)
        self.inner = inner
        self.plan = planner
        self.name = f"{inner.name}+plan"

    def answer(self, run: Run) -> Answer:
        planner, planning = self.plan.plan_step(run)
        evidence = plan_evidence(planning, planner.verbalizer)
        if evidence:
            best = planning.answers()[: self.plan.config.answer_items]
            planner.verbalizer.prepare(best)
            names = list(dict.fromkeys(planner.verbalizer.name(n) for n in best))
            run.prior = PriorEvidence([p.text for p in evidence.paths], evidence, names)
        return self.inner.answer(run)

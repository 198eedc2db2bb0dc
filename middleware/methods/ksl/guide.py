"""Planned relation paths as guidance for the walk (``ksl+plan``).

The planner's walks from the question's entity say which neighbour a plan steps to
next from any walk prefix, and where a plan ends. Planned steps are offered first and
never cut by the hub cap; when the plan is confident (a learned plan, not a zero-shot
backup, with support at or above ``plan_min_confidence``) only the best supported of
them (the best plan's) are offered.
With choices, when some planned walks end on a choice's entity, only those guide.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pyoxigraph import NamedNode

from middleware.kg.terms import Term
from middleware.methods.ksl.walk import Guide
from middleware.planning.plans import Planning


class PlanGuide(Guide):
    """Guidance read from one question's ``Planning``."""

    def __init__(
        self, planning: Planning, *, min_confidence: float, targets: Collection[Term] = ()
    ) -> None:
        self.walks = [
            (plan.candidate.support, tuple(walk.nodes))
            for plan in planning.plans
            for walk in plan.walks
        ]
        reaching = [(s, w) for s, w in self.walks if w[-1] in targets]
        if reaching:  # multiple choice: the planned walks that end on a choice lead
            self.walks = reaching
        best = planning.plans[0] if planning.plans else None
        self.confident = (
            best is not None
            and planning.mode in ("learned", "generated")
            and not best.backup
            and planning.confidence >= min_confidence
        )
        self.topic: NamedNode | None = None
        if best is not None and isinstance(best.candidate.topic, NamedNode):
            self.topic = best.candidate.topic

    def planned(self, nodes: Sequence[Term]) -> dict[Term, float]:
        prefix = tuple(nodes)
        size = len(prefix)
        out: dict[Term, float] = {}
        for support, walk in self.walks:
            if len(walk) > size and walk[:size] == prefix:
                out[walk[size]] = max(out.get(walk[size], 0.0), support)
        return out

    def stops(self, nodes: Sequence[Term]) -> float:
        prefix = tuple(nodes)
        return max((support for support, walk in self.walks if walk == prefix), default=0.0)

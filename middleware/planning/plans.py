"""What the planner produces: candidates (relation paths from a topic with their
support), the plans among them that reached something, and the planning as a whole
(its mode, plans, notes, and what the question asked for)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from pyoxigraph import NamedNode

from middleware.kg.base import Path
from middleware.kg.walks import RelationPath
from middleware.planning.relpaths import ends, path_key

Mode = Literal["learned", "generated", "zero-shot", "none"]


@dataclass(frozen=True)
class Candidate:
    """A relation path from a topic with its support (vote share or softmax score)."""

    topic: NamedNode
    span: str
    path: RelationPath
    support: float
    wide: bool = False  # from the wider ring of neighbours: walked after the backup plan


@dataclass(frozen=True)
class Plan:
    """A candidate that was walked and reached something."""

    candidate: Candidate
    walks: list[Path]
    description: str
    backup: bool = False  # the zero-shot plan added after unsure learned ones
    generated: bool = False  # chosen by the vote of entries worded from the graph
    kind: str = ""  # what its ends are (``answer_types.py``), where the question asked

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.candidate.topic.value,
            "path": path_key(self.candidate.path),
            "reads": self.description,
            "support": round(self.candidate.support, 4),
            "walks": len(self.walks),
            "backup": self.backup,
            "generated": self.generated,
            **({"kind": self.kind} if self.kind else {}),
        }


@dataclass
class Planning:
    """What the planner did: its mode, the plans that reached something, and why."""

    mode: Mode
    plans: list[Plan] = field(default_factory=list)
    considered: list[Candidate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # per (span, topic IRI), how much the question asks for relation paths the topic
    # lacks: learned, the nearest questions' vote share for paths that do not start at
    # it; zero-shot, how much better a path its peers hold reads (``PathReading.unheld``)
    unheld: dict[tuple[str, str], float] = field(default_factory=dict)
    worded: set[str] = field(default_factory=set)  # voted paths generated entries chose
    asked: str | None = None  # the kind of answer the question asks for, if it says

    @property
    def confidence(self) -> float:
        return self.plans[0].candidate.support if self.plans else 0.0

    @property
    def unheld_share(self) -> float:
        """How much the question asks for relation paths the best plan's topic lacks
        (``unheld``), from 0 to 1: a question about a relation its entity does not have
        ("who directed" an actor) is answered, if at all, along another path (0 with
        no plan)."""
        if not self.plans:
            return 0.0
        best = self.plans[0].candidate
        return self.unheld.get((best.span, best.topic.value), 0.0)

    def answers(self) -> list[NamedNode]:
        """The entities the best plan reaches, those that more of the other plans also
        reach first (agreement between relation paths), then as ``ends`` orders them."""
        if not self.plans:
            return []
        reached = Counter(node for plan in self.plans for node in set(ends(plan.walks)))
        best = ends(self.plans[0].walks)
        return sorted(best, key=lambda node: -reached[node])  # stable: ends' order kept

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "plans": [p.to_dict() for p in self.plans],
            "considered": len(self.considered),
            "confidence": round(self.confidence, 4),
            "unheld": round(self.unheld_share, 4),
            **({"asks_for": self.asked} if self.asked else {}),
            "notes": list(self.notes),
        }

"""Abstention: an answer that says the graph does not hold the answer.

An answer abstains when its ``found`` is false (``Answer.found``, in the JSON too) or
its text is the methods' ``NOT_FOUND`` ("Not found in the graph."), compared as the
metrics compare names (a record of another tool may hold only the text). For an unanswerable question
abstaining is right; for an answerable one it is a miss, counted apart from Hits@1.
A question that failed did not abstain.

>>> abstains("not found in the graph"), abstains("Heat", found=False), abstains(None)
(True, True, False)
>>> counts = Abstention()
>>> for kind, said in [(None, "Heat"), ("made-up-entity", "Not found in the graph."),
...                    ("absent-relation", "Michael Mann")]:
...     counts.add({"answerable": kind is None, "meta": {"kind": kind} if kind else {},
...                 "prediction": said, "hit": None})
>>> round(counts.rate, 3), counts.answerable_rate, counts.by_kind()
(0.333, 0.0, {'made-up-entity': 1.0, 'absent-relation': 0.0})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from middleware.eval.metrics import normalize
from middleware.eval.unanswerable import KINDS
from middleware.methods.answer import NOT_FOUND

_NOT_FOUND = normalize(NOT_FOUND)


def abstains(prediction: str | None, *, found: bool | None = None) -> bool:
    """Whether an answer says the graph does not hold the answer."""
    if found is False:
        return True
    return prediction is not None and normalize(prediction) == _NOT_FOUND


def answerable(record: Mapping[str, Any]) -> bool:
    """Whether a result record's question has an answer (records from before the field: yes)."""
    return record.get("answerable", True) is not False


def abstained(record: Mapping[str, Any]) -> bool:
    """Whether a result record abstained: its ``abstained`` field, else worked out from
    its prediction and ``found``."""
    said = record.get("abstained")
    if isinstance(said, bool):
        return said
    return not record.get("error") and abstains(record.get("prediction"), found=record.get("found"))


def kind(record: Mapping[str, Any]) -> str:
    """Why a record's question is unanswerable ("unanswerable" when it does not say)."""
    meta = record.get("meta") or {}
    return str(meta.get("kind") or "unanswerable")


@dataclass
class Abstention:
    """Counts of abstentions in one group of records."""

    questions: int = 0
    abstained: int = 0
    answerable: int = 0
    answerable_abstained: int = 0
    kinds: dict[str, list[int]] = field(default_factory=dict)  # kind: [questions, abstained]

    def add(self, record: Mapping[str, Any]) -> None:
        said = abstained(record)
        self.questions += 1
        self.abstained += said
        if answerable(record):
            self.answerable += 1
            self.answerable_abstained += said
        else:
            counts = self.kinds.setdefault(kind(record), [0, 0])
            counts[0] += 1
            counts[1] += said

    @property
    def rate(self) -> float:
        """Share of all questions abstained."""
        return self.abstained / self.questions if self.questions else 0.0

    @property
    def answerable_rate(self) -> float | None:
        """Share of answerable questions abstained (None without any)."""
        return self.answerable_abstained / self.answerable if self.answerable else None

    @property
    def unanswerable(self) -> int:
        return self.questions - self.answerable

    def by_kind(self) -> dict[str, float]:
        """Share of unanswerable questions abstained, per kind (known kinds first)."""
        order = [k for k in KINDS if k in self.kinds] + sorted(set(self.kinds) - set(KINDS))
        return {k: self.kinds[k][1] / self.kinds[k][0] for k in order}

    def as_json(self) -> dict[str, Any]:
        return {
            "answerable": self.answerable,
            "unanswerable": self.unanswerable,
            "abstained": round(self.rate, 4),
            "abstained_answerable": _rounded(self.answerable_rate),
            "abstained_by_kind": {k: round(v, 4) for k, v in self.by_kind().items()},
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)

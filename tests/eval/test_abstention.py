"""Abstention: what counts as one, and the shares per group, kind and answerability."""

from __future__ import annotations

from typing import Any

import pytest

from middleware.eval.abstention import Abstention, abstained, abstains, answerable
from middleware.methods.answer import NOT_FOUND


@pytest.mark.parametrize(
    ("prediction", "found", "said"),
    [
        (NOT_FOUND, None, True),
        ("not found in the graph", None, True),  # the answer line cleaned of its period
        ("Michael Mann", False, True),  # the answer JSON's flag wins
        ("Michael Mann", None, False),
        ("Michael Mann", True, False),
        ("Not found", None, False),
        ("", None, False),
        (None, None, False),
    ],
)
def test_what_abstains(prediction: str | None, found: bool | None, said: bool) -> None:
    assert abstains(prediction, found=found) is said


def row(kind: str | None, prediction: str | None, **extra: Any) -> dict[str, Any]:
    meta = {"kind": kind} if kind else {}
    return {"answerable": kind is None, "meta": meta, "prediction": prediction, **extra}


def test_records_abstain_by_their_field_or_their_answer() -> None:
    assert abstained({"abstained": True, "prediction": "Heat"})
    assert abstained({"prediction": NOT_FOUND})  # a record from before the field
    assert abstained({"prediction": "Heat", "found": False})
    assert not abstained({"prediction": None, "error": {"class": "LLMError"}})
    assert answerable({}) and not answerable({"answerable": False})


def test_shares_per_kind_and_for_answerable_questions() -> None:
    counts = Abstention()
    rows = [
        row(None, "Heat"),
        row(None, NOT_FOUND),
        row("made-up-entity", NOT_FOUND),
        row("made-up-entity", "Zorblax"),
        row("absent-relation", NOT_FOUND),
        row("absent-relation", None, error={"class": "LLMError"}),  # failed: no abstention
        row("", NOT_FOUND, answerable=False),  # unanswerable without a kind
    ]
    for record in rows:
        counts.add(record)
    assert (counts.questions, counts.answerable, counts.unanswerable) == (7, 2, 5)
    assert counts.rate == pytest.approx(4 / 7) and counts.answerable_rate == 0.5
    assert counts.by_kind() == {"made-up-entity": 0.5, "absent-relation": 0.5, "unanswerable": 1.0}
    assert counts.as_json() == {
        "answerable": 2,
        "unanswerable": 5,
        "abstained": 0.5714,
        "abstained_answerable": 0.5,
        "abstained_by_kind": {"made-up-entity": 0.5, "absent-relation": 0.5, "unanswerable": 1.0},
    }
    assert Abstention().answerable_rate is None and Abstention().rate == 0.0

"""Every graph method over a hub of 100,000 edges: each read is capped (no query returns
more rows than the largest cap, plus the one row that shows a cut) and the answer's
steps say what was cut, at which node, under which setting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from middleware.kg.base import QueryResult
from middleware.methods.answer import Answer
from middleware.methods.registry import build_method
from middleware.testing.llms import first_option_or
from middleware.testing.methods import quick_settings
from middleware.testing.observed import ObservedStore

HUB_EDGES = 100_000
LARGEST_CAP = 2_000  # ksl_neighbor_limit, the largest default read cap of any method
QUESTION = "Which films have the genre Drama?"
METHODS = ["plan", "ksl", "rok", "qsm", "pg", "ksl+plan", "rok+plan", "qsm+plan", "pg+plan"]


class RowCountingStore(ObservedStore):
    """A local store that remembers the most rows any one query returned."""

    largest = 0

    def after(self, sparql: str, result: QueryResult) -> None:
        self.largest = max(self.largest, len(result.rows))


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> RowCountingStore:
    folder: Path = tmp_path_factory.mktemp("hub")
    lines = [f"Film {i:06d}|has_genre|Drama" for i in range(HUB_EDGES)]
    lines += [
        "Film 000007|directed_by|Ann Hui",
        "Film 000007|starred_actors|Bo Li",
        "Other Film|starred_actors|Bo Li",
    ]
    store = RowCountingStore(folder / "store", profile="metaqa", name="hub")
    store.load_text("\n".join(lines) + "\n", name="kb.txt")
    return store


def answer(hub: RowCountingStore, method: str, question: str, **kwargs: Any) -> Answer:
    hub.largest = 0
    built = build_method(method, quick_settings(), first_option_or("Ann Hui"), hub)
    return built.run(question, **kwargs)


def cut_notes(result: Answer) -> list[str]:
    return [n for step in result.steps for n in step.notes if "more were cut (cap:" in n]


@pytest.mark.parametrize("method", METHODS)
def test_a_question_at_the_hub_reads_within_the_caps_and_records_the_cut(
    hub: RowCountingStore, method: str
) -> None:
    result = answer(hub, method, QUESTION)
    assert hub.largest <= LARGEST_CAP + 1, f"{method}: a query returned {hub.largest} rows"
    notes = cut_notes(result)
    assert notes, f"{method}: no step says what was cut: {[s.notes for s in result.steps]}"
    assert any(n.startswith("Drama: read") or "from 'Drama': read" in n for n in notes), notes


@pytest.mark.parametrize("method", METHODS)
def test_a_question_beside_the_hub_is_not_cut(hub: RowCountingStore, method: str) -> None:
    result = answer(hub, method, "Who directed the films starring Bo Li?")
    assert hub.largest <= LARGEST_CAP + 1
    assert not [n for n in cut_notes(result) if "Bo Li" in n]


def test_multiple_choice_reads_within_the_caps(hub: RowCountingStore) -> None:
    for method in ("reach", "ksl"):
        result = answer(
            hub, method, "Which of these is a Drama film?", choices=["Film 000007", "Ann Hui"]
        )
        assert hub.largest <= LARGEST_CAP + 1, method
        assert result.answer == "Film 000007", method

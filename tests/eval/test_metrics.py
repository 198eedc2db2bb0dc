"""Metrics on hand-made cases."""

from __future__ import annotations

import pytest

from middleware.eval.metrics import (
    answer_items,
    choice_correct,
    evidence_recall,
    hits_at_1,
    normalize,
    rouge_l,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Godfather", "godfather"),
        ("  AN   Apple a day ", "apple day"),
        ("Amélie", "amelie"),
        ("Thank You, Jeeves!", "thank you jeeves"),
        ("Ocean's Eleven", "ocean s eleven"),
        ("", ""),
    ],
)
def test_normalize(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("prediction", "gold", "top_names", "hit"),
    [
        ("Michael Mann", ["michael mann"], (), True),  # case
        ("The Godfather.", ["Godfather"], (), True),  # article and punctuation
        ("Heat, Ronin", ["Ronin"], (), False),  # only the first listed answer counts
        ("Heat, Ronin", ["Heat"], (), True),
        ("Heat (1995)", ["Heat"], (), True),  # whole-word run inside the first item
        ("Heatwave", ["Heat"], (), False),  # not inside a word
        ("Washington, D.C.", ["Washington, D.C."], (), True),  # comma inside a gold name
        ("Jim Cameron", ["James Cameron"], ("James Cameron", "Jim Cameron"), True),  # alias
        ("", ["Heat"], (), False),
        ("", ["Heat"], ("Heat",), True),  # grounded entity without answer text
        ("Heat", [], (), False),
    ],
)
def test_hits_at_1(prediction: str, gold: list[str], top_names: tuple[str, ...], hit: bool) -> None:
    assert hits_at_1(prediction, gold, top_names=top_names) is hit


def test_answer_items() -> None:
    assert answer_items("a\nb; c | d,e") == ["a", "b", "c", "d", "e"]
    assert answer_items("  ") == []


def test_evidence_recall_by_name_or_iri() -> None:
    assert evidence_recall(["Kate Winslet"], ["Titanic", "KATE WINSLET"])
    assert evidence_recall(["http://x/e1"], ["http://x/e1"])
    assert not evidence_recall(["Sam Mendes"], ["Titanic"])
    assert not evidence_recall([], ["Titanic"])


def test_choice_correct_needs_exactly_the_key() -> None:
    choices = ["bank", "library", "bank robbery"]
    assert choice_correct("bank", "bank", choices)
    assert choice_correct(' "Bank". ', "bank", choices)
    assert not choice_correct("library", "bank", choices)
    assert not choice_correct("a bank or a library", "bank", choices)


def test_rouge_l_f1() -> None:
    # LCS "cat on mat" = 3 of 4 prediction words and 3 of 3 reference words.
    assert rouge_l("cat sat on mat", ["cat on mat"]) == pytest.approx(2 * 0.75 * 1 / 1.75)
    assert rouge_l("x y", ["a b", "y"]) == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert rouge_l("nothing shared", ["else"]) == 0.0
    assert rouge_l("", ["x"]) == 0.0

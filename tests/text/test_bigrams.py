"""The typo-tolerant search scores only labels sharing enough character pairs with the
mention, and finds exactly what scoring every label finds."""

from __future__ import annotations

import random

import pytest
from rapidfuzz import fuzz, process

from middleware.text.bigrams import Bigrams

ALPHABET = "aeilnorst "  # few letters: many labels near one another


def edited(rng: random.Random, text: str, edits: int) -> str:
    chars = list(text)
    for _ in range(edits):
        where = rng.randrange(len(chars) + 1)
        if chars and rng.random() < 0.5:
            del chars[min(where, len(chars) - 1)]
        else:
            chars.insert(where, rng.choice(ALPHABET))
    return "".join(chars)


@pytest.mark.parametrize("cutoff", [60.0, 85.0, 95.0])
def test_the_candidates_hold_every_label_that_reaches_the_cutoff(cutoff: float) -> None:
    rng = random.Random(7)
    keys = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 16))) for _ in range(3000)]
    pairs = Bigrams(keys)
    filtered_somewhere = False
    for _ in range(300):
        mention = edited(rng, rng.choice(keys), rng.randint(0, 3)) or "a"
        everything = process.extract(
            mention, keys, scorer=fuzz.ratio, limit=None, score_cutoff=cutoff
        )
        chosen = pairs.candidates(mention, cutoff)
        assert chosen is not None
        filtered_somewhere = filtered_somewhere or len(chosen) < len(keys)
        assert {i for _, _, i in everything} <= set(chosen), mention
        subset = [keys[i] for i in chosen]
        found = process.extract(mention, subset, scorer=fuzz.ratio, limit=None, score_cutoff=cutoff)
        assert [(k, s) for k, s, _ in found] == [(k, s) for k, s, _ in everything]
    assert filtered_somewhere


def test_a_short_mention_scores_the_labels_of_a_length_within_reach() -> None:
    pairs = Bigrams(["heat", "the heat", "michael mann", "hot"])
    # lengths 3-4 only; at 4 the pair bound excludes nothing, at 3 it needs both pairs
    assert pairs.candidates("hat", 85.0) == [0]
    assert pairs.candidates("michael mann", 0.0) is None  # no cutoff: every label
    assert pairs.candidates("qwertyuiopas", 85.0) == []  # no label holds its pairs


def test_labels_too_long_or_short_to_reach_the_cutoff_are_not_candidates() -> None:
    # numbered copies of one name, as a graph copied many times labels them
    keys = ["paris", *(f"paris {i}" for i in range(1, 300)), "pari", "parisx"]
    chosen = Bigrams(keys).candidates("paris", 85.0)
    assert chosen is not None
    assert [keys[i] for i in chosen] == ["paris", "pari", "parisx"]
    everything = process.extract("paris", keys, scorer=fuzz.ratio, limit=None, score_cutoff=85.0)
    assert {i for _, _, i in everything} <= set(chosen)


def test_threads_searching_first_build_the_pairs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from pyoxigraph import NamedNode

    from middleware.kg.base import LabelRow
    from middleware.text import label_index

    built = []
    real = label_index.Bigrams

    def counted(keys: list[str]) -> Bigrams:
        built.append(len(keys))
        return real(keys)

    monkeypatch.setattr(label_index, "Bigrams", counted)
    rows = [LabelRow(NamedNode(f"http://ex.org/{i}"), f"label number {i}") for i in range(500)]
    index = label_index.LabelIndex(rows)
    threads = [
        threading.Thread(
            target=index.fuzzy, args=("label numbr 7",), kwargs={"cutoff": 85.0, "limit": 3}
        )
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert built == [500]


def test_a_tiny_cutoff_reads_only_the_lengths_labels_have() -> None:
    pairs = Bigrams(["abc", "abd"])
    assert pairs.candidates("x" * 50, 0.0001) == [0, 1]  # lengths 3 only, not 10**8

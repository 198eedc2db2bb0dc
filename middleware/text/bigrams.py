"""Which labels a typo-tolerant search must score: those of a length within reach that
share enough character pairs with the mention.

rapidfuzz's ``ratio`` is ``100 * (1 - indel / (m + n))``, with ``indel`` the insertions
and deletions that turn one text of ``m`` characters into one of ``n``. To reach a
cutoff ``c`` (as a fraction), ``indel <= (1 - c) * (m + n)``. Since ``indel`` is at
least ``|m - n|``, only labels of a length between ``m * c / (2 - c)`` and
``m * (2 - c) / c`` can reach it. One edit removes at most two of the mention's
distinct character pairs, so a label of length ``n`` within reach still holds all but
``2 * floor((1 - c) * (m + n))`` of them. Labels failing either bound are never
scored: the hits are those of scoring every label, at a cost set by how many labels of
a length within reach share pairs with the mention. Pair lists are kept per label
length, so only the lengths within reach are read; where the pair bound excludes
nothing at a length, every label of that length is a candidate (``EVERY``).

>>> pairs = Bigrams(["heat", "michael mann", "the heat"])
>>> pairs.candidates("michel mann", 85.0)
[1]
>>> pairs.candidates("hat", 85.0)  # too short for the pair bound: lengths 3 and 4
[0]
>>> pairs.candidates("hat", 0.0) is None  # no cutoff: every label is scored
True
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

EVERY = ""  # the pair every label holds: the positions of all labels of a length

# a pair's label positions by label length, for lengths lo..hi: (length, positions)
Postings = Callable[[str, int, int], "list[tuple[int, np.ndarray[Any, Any]]]"]


def pairs_of(text: str) -> set[str]:
    """The distinct pairs of adjacent characters of ``text``."""
    return {text[i : i + 2] for i in range(len(text) - 1)}


def lengths_within_reach(length: int, share: float) -> tuple[int, int]:
    """The shortest and longest label that can reach ``share`` (a fraction, above 0)
    against a mention of ``length`` characters."""
    low = math.ceil(length * share / (2 - share) - 1e-9)
    high = math.floor(length * (2 - share) / share + 1e-9)
    return max(low, 0), high


def _edits(mention: int, label: int, share: float) -> int:
    """The most insertions and deletions a label of ``label`` characters may be from a
    mention of ``mention`` characters and still reach ``share``."""
    return math.floor((1 - share) * (mention + label) + 1e-9)


def candidate_positions(
    mention: str, cutoff: float, postings: Postings, longest: int
) -> list[int] | None:
    """The positions of the labels (the longest of ``longest`` characters) that may
    reach ``cutoff`` (0-100) against ``mention``, in order, given each pair's positions
    by label length; None when every label must be scored (no cutoff)."""
    share = cutoff / 100
    if share <= 0:
        return None
    pairs = sorted(pairs_of(mention))
    low, high = lengths_within_reach(len(mention), share)
    high = min(high, longest)  # a tiny cutoff reaches lengths no label has
    by_length: dict[int, list[np.ndarray[Any, Any]]] = {}
    for pair in pairs:
        for length, found in postings(pair, low, high):
            by_length.setdefault(length, []).append(found)
    chosen: list[np.ndarray[Any, Any]] = []
    unbounded = []  # lengths at which the pair bound excludes nothing
    for length in range(low, high + 1):
        needed = len(pairs) - 2 * _edits(len(mention), length, share)
        if needed <= 0:
            unbounded.append(length)
            continue
        held = by_length.get(length, [])
        if len(held) < needed:
            continue
        found, counts = np.unique(np.concatenate(held), return_counts=True)
        chosen.append(found[counts >= needed])
    if unbounded:
        for length, found in postings(EVERY, unbounded[0], unbounded[-1]):
            if length in unbounded:
                chosen.append(found)
    if not chosen:
        return []
    return [int(i) for i in np.unique(np.concatenate(chosen))]


def postings_of(keys: Sequence[str]) -> Iterator[tuple[str, int, np.ndarray[Any, Any]]]:
    """For each label length and pair of adjacent characters, the positions (in order)
    of the keys of that length holding it; ``EVERY`` holds every key of its length."""
    by_length: dict[int, array[int]] = {}
    for position, key in enumerate(keys):
        found = by_length.get(len(key))
        if found is None:
            found = by_length[len(key)] = array("i")
        found.append(position)
    for length, positions in sorted(by_length.items()):
        postings: dict[str, array[int]] = {}
        for position in positions:
            for pair in pairs_of(keys[position]):
                held = postings.get(pair)
                if held is None:
                    held = postings[pair] = array("i")
                held.append(position)
        yield EVERY, length, np.frombuffer(positions, dtype=np.int32)
        for pair, held in postings.items():
            yield pair, length, np.frombuffer(held, dtype=np.int32)


class Bigrams:
    """For each pair of adjacent characters, the labels (by position) that hold it,
    by label length."""

    def __init__(self, keys: Sequence[str]) -> None:
        self._postings: dict[str, dict[int, np.ndarray[Any, Any]]] = {}
        for pair, length, positions in postings_of(keys):
            self._postings.setdefault(pair, {})[length] = positions
        self._longest = max(self._postings.get(EVERY, {0: None}))

    def _of(self, pair: str, low: int, high: int) -> list[tuple[int, np.ndarray[Any, Any]]]:
        lengths = self._postings.get(pair, {})
        return [(n, found) for n, found in lengths.items() if low <= n <= high]

    def candidates(self, mention: str, cutoff: float) -> list[int] | None:
        """The positions of the labels that may reach ``cutoff`` (0-100) against
        ``mention`` (both folded), in order; None when every label must be scored."""
        return candidate_positions(mention, cutoff, self._of, self._longest)

"""Which labels a typo-tolerant search must score: those sharing enough character pairs.

rapidfuzz's ``ratio`` is ``100 * (1 - indel / (m + n))``, with ``indel`` the insertions
and deletions that turn one text into the other. For a mention of ``m`` characters to
reach a cutoff ``c`` (as a fraction), a label can be at most ``m * (2 - c) / c`` long,
so at most ``(1 - c) * 2m / c`` edits apart. One edit removes at most two of the
mention's character pairs, so a label within reach still holds all but
``2 * edits`` of the mention's distinct pairs. Labels holding fewer cannot reach the
cutoff, and are never scored: the hits are those of scoring every label, at a cost set
by how many labels share pairs with the mention. A mention too short for the bound to
exclude anything (the bound is 0 or less) is scored against every label.

>>> pairs = Bigrams(["heat", "michael mann", "the heat"])
>>> pairs.candidates("michel mann", 85.0)
[1]
>>> pairs.candidates("hat", 85.0) is None  # too short: every label is scored
True
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np


def pairs_of(text: str) -> set[str]:
    """The distinct pairs of adjacent characters of ``text``."""
    return {text[i : i + 2] for i in range(len(text) - 1)}


Postings = Callable[[str], "np.ndarray[Any, Any] | None"]  # a pair's label positions


def candidate_positions(
    mention: str, cutoff: float, postings: Postings, size: int
) -> list[int] | None:
    """The positions (of ``size`` labels) that may reach ``cutoff`` (0-100) against
    ``mention``, given each pair's positions; None when every label must be scored."""
    share = cutoff / 100
    if share <= 0:
        return None
    pairs = pairs_of(mention)
    edits = math.floor((1 - share) * 2 * len(mention) / share + 1e-9)
    needed = len(pairs) - 2 * edits
    if needed <= 0:
        return None
    held = [found for p in sorted(pairs) if (found := postings(p)) is not None]
    if len(held) < needed:
        return []
    counts = np.bincount(np.concatenate(held), minlength=size)
    return [int(i) for i in np.flatnonzero(counts >= needed)]


def postings_of(keys: Iterable[str]) -> dict[str, array[int]]:
    """For each pair of adjacent characters, the positions of the keys holding it."""
    postings: dict[str, array[int]] = {}
    for position, key in enumerate(keys):
        for pair in pairs_of(key):
            found = postings.get(pair)
            if found is None:
                found = postings[pair] = array("i")
            found.append(position)
    return postings


class Bigrams:
    """For each pair of adjacent characters, the labels (by position) that hold it."""

    def __init__(self, keys: Sequence[str]) -> None:
        self._postings = {
            pair: np.frombuffer(rows, dtype=np.int32) for pair, rows in postings_of(keys).items()
        }
        self._size = len(keys)

    def candidates(self, mention: str, cutoff: float) -> list[int] | None:
        """The positions of the labels that may reach ``cutoff`` (0-100) against
        ``mention`` (both folded), in order; None when every label must be scored."""
        return candidate_positions(mention, cutoff, self._postings.get, self._size)

"""The vote of a question's nearest memory entries for relation paths.

Each neighbour votes with its cosine to ``VOTE_POWER`` (near-paraphrases dominate),
split among its paths. A generated entry (worded from the graph, ``from_graph.py``)
votes for less than a user's question, and less the longer its path: a long path's
wording holds more relation words, which read close to more questions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from middleware.planning.memory import MemoryEntry
from middleware.text.embeddings.index import Hit

VOTE_POWER = 16.0
GENERATED_WEIGHT = 0.2
GENERATED_HOPS = {1: 1.0, 2: 0.5, 3: 0.25}


def votes_of(
    hits: Sequence[Hit[int]], entries: list[MemoryEntry], generated: set[str] | None = None
) -> dict[str, float]:
    """Each path's share of the vote of ``hits`` (cosine to ``VOTE_POWER``, less for a
    generated entry; a neighbour's weight split among its paths). ``generated`` gets
    the paths whose vote came mostly from generated entries."""
    votes: dict[str, float] = defaultdict(float)
    worded: dict[str, float] = defaultdict(float)
    weights = [max(h.score, 0.0) ** VOTE_POWER * _weight(entries[h.item]) for h in hits]
    total = sum(weights) or 1.0
    for hit, weight in zip(hits, weights, strict=True):
        entry = entries[hit.item]
        for mined in entry.paths:
            votes[mined.key] += weight / total / len(entry.paths)
            if entry.generated:
                worded[mined.key] += weight / total / len(entry.paths)
    if generated is not None:
        generated.update(key for key, share in worded.items() if share * 2 > votes[key])
    return votes


def _weight(entry: MemoryEntry) -> float:
    """1 for a user's question; a generated entry's weight by its path's length."""
    if not entry.generated:
        return 1.0
    hops = int(entry.hops) if entry.hops and entry.hops.isdigit() else 3
    return GENERATED_WEIGHT * GENERATED_HOPS.get(hops, 0.25)

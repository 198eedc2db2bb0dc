"""PageRank by power iteration over an undirected multigraph of triples.

Each triple joins its two ends in both directions; parallel triples add weight. Mass
of nodes without edges is spread evenly, as in the usual formulation
``PR = d · M · PR + (1 - d) / n``.

>>> ranks = pagerank([("a", "b"), ("b", "c")])
>>> [round(ranks[n], 4) for n in "abc"]
[0.2568, 0.4865, 0.2568]
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

import numpy as np

from middleware.errors import BadRequest

N = TypeVar("N", bound=Hashable)


def pagerank(
    edges: Iterable[tuple[N, N]],
    *,
    damping: float = 0.85,
    tolerance: float = 1.0e-6,
    max_iterations: int = 200,
) -> dict[N, float]:
    """Stationary scores of every node; they sum to 1.

    Stops when the summed absolute change is under ``n * tolerance`` (the criterion
    networkx uses) or after ``max_iterations``.
    """
    if not 0.0 < damping < 1.0:
        raise BadRequest(f"PageRank damping must be between 0 and 1, got {damping}")
    index: dict[N, int] = {}
    sources: list[int] = []
    targets: list[int] = []
    for a, b in edges:
        i = index.setdefault(a, len(index))
        j = index.setdefault(b, len(index))
        sources.append(i)
        targets.append(j)
        if i != j:
            sources.append(j)
            targets.append(i)
    n = len(index)
    if n == 0:
        return {}
    src = np.asarray(sources, dtype=np.int64)
    dst = np.asarray(targets, dtype=np.int64)
    out_weight = np.bincount(src, minlength=n).astype(float)
    dangling = out_weight == 0
    share = np.divide(1.0, out_weight, out=np.zeros(n), where=~dangling)
    ranks = np.full(n, 1.0 / n)
    for _ in range(max_iterations):
        previous = ranks
        flow = np.bincount(dst, weights=previous[src] * share[src], minlength=n)
        ranks = damping * (flow + previous[dangling].sum() / n) + (1.0 - damping) / n
        if np.abs(ranks - previous).sum() < n * tolerance:
            break
    nodes = list(index)
    return {node: float(ranks[i]) for i, node in enumerate(nodes)}

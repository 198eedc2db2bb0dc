"""Reference path enumeration with networkx, to check ``paths()`` against (tests, benchmarks).

Builds an undirected multigraph of the relation triples and lists every simple path
of exactly ``hops`` edges between two nodes, keeping each edge's direction.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import networkx as nx

from middleware.kg.base import Path

PathKey = tuple[tuple[tuple[str, str, str], bool], ...]


def relation_graph(triples: Iterable[tuple[str, str, str]]) -> nx.MultiGraph[str]:
    graph: nx.MultiGraph[str] = nx.MultiGraph()
    for s, p, o in triples:
        if s != o:
            graph.add_edge(s, o, key=(s, p, o))
    return graph


def brute_force_paths(graph: nx.MultiGraph[str], a: str, b: str, hops: int) -> set[PathKey]:
    """Every simple path of exactly ``hops`` edges from ``a`` to ``b``."""
    found: set[PathKey] = set()
    if a not in graph or b not in graph:
        return found
    for edges in nx.all_simple_edge_paths(graph, a, b, cutoff=hops):
        if len(edges) != hops:
            continue
        # on a multigraph each edge is (u, v, key); the key is the (s, p, o) triple
        hops_walked: list[tuple[str, str, tuple[str, str, str]]] = list(edges)  # type: ignore[arg-type]
        found.add(tuple((key, u == key[0]) for u, _v, key in hops_walked))
    return found


def path_key(path: Path) -> PathKey:
    """The same key for a ``Path`` from ``paths()``, with N-Triples terms as strings."""
    return tuple(
        ((str(h.triple.subject), str(h.triple.predicate), str(h.triple.object)), h.forward)
        for h in path.hops
    )


def sample_pairs(
    graph: nx.MultiGraph[str], count: int, hops: int, *, seed: int, max_degree: int = 300
) -> list[tuple[str, str]]:
    """Pairs joined by a random walk of ``hops`` steps, avoiding hub endpoints."""
    rng = random.Random(seed)
    nodes = sorted(n for n in graph if graph.degree(n) <= max_degree)
    pairs: list[tuple[str, str]] = []
    while len(pairs) < count:
        start = rng.choice(nodes)
        walk = [start]
        for _ in range(hops):
            walk.append(rng.choice(sorted(graph.neighbors(walk[-1]))))
        end = walk[-1]
        if end != start and len(set(walk)) == len(walk) and graph.degree(end) <= max_degree:
            pairs.append((start, end))
    return pairs

"""A hub's neighbours spread over its relations, not one sample of its edges.

Past ``SORT_WINDOW`` edges a node's neighbours are read from a sample in the engine's
order (``neighbors``), and a hub's sample is whatever relation its edges happen to
come first in: at 100 copies of FB15k-237, Austria's first 100 neighbours hold 2
relations, all edges to places, against 19 (its capital among them) in the graph of
one copy. Spread, the read takes edges of each relation the hub has in turn
(``relation_steps``, which probes a hub predicate by predicate), so what a question
asks about is there at any size. Each relation reads at most the cap; when a hub has
more relations than the cap, the first by predicate are read. On a graph whose
predicates are probed (at most ``MAX_PREDICATES``), the cost is set by the hub's
relations and the cap, not by its degree.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> lines = [f"Film {i:04d}|has_genre|Drama" for i in range(2_100)] + ["Drama|has_tags|genre"]
>>> _ = kg.load_text("\\n".join(lines) + "\\n", name="kb.txt")
>>> drama = kg.search("Drama")[0].iri
>>> triples, relations = spread_neighbors(kg, drama, 10)
>>> sorted({t.predicate.value.rsplit("/", 1)[-1] for t in triples}), relations
(['has_genre', 'has_tags'], 2)
"""

from __future__ import annotations

from pyoxigraph import NamedNode

from middleware.kg.base import KnowledgeGraph, Triple
from middleware.kg.walks import RelationStep

SPREAD_WINDOW = 100  # edges of one relation a sample is drawn from, at least (at most the cap)
SPREAD_ROUNDS = 3  # reads again of the relations that can give more, after the first


def spread_neighbors(
    graph: KnowledgeGraph, entity: NamedNode, cap: int
) -> tuple[list[Triple], int]:
    """At most ``cap`` triples around ``entity`` (both directions), taken in turn from
    each of its relations, and how many relations they hold. The triples come relation
    by relation, outgoing ones first, then by predicate; within a relation, the first
    ``n`` that ``follow`` gives from a window of ``max(n, min(cap, SPREAD_WINDOW))``
    edges (``n``: how many the relation is read for).

    With ``cap <= SPREAD_WINDOW`` each relation is read once, up to the cap. Past it,
    the first read is each relation's even share (at least ``SPREAD_WINDOW``); then the
    relations that may hold more are read again up to the level that taking in turn
    would reach were they endless (``_water_level``), for at most ``SPREAD_ROUNDS``
    rounds. Each round reads about the cap in rows, so the cost is a few times the cap
    plus ``SPREAD_WINDOW`` per relation, not the relations times the cap. In a rare
    staircase of relation sizes that the rounds do not settle, fewer than ``cap``
    triples come back although more exist."""
    if cap <= 0:
        return [], 0
    steps = sorted(graph.relation_steps([entity]), key=lambda s: (not s[1], s[0].value))[:cap]
    if not steps:
        return [], 0
    floor = min(cap, SPREAD_WINDOW)

    def read(step: RelationStep, n: int) -> list[Triple]:
        walks = graph.follow(entity, (step,), limit=n, window=max(n, floor))
        return [walk.hops[0].triple for walk in walks]

    asked = [max(-(-cap // len(steps)), floor)] * len(steps)
    per_step = [read(step, n) for step, n in zip(steps, asked, strict=True)]
    for _ in range(SPREAD_ROUNDS):
        open_ = {i for i, triples in enumerate(per_step) if len(triples) == asked[i]}
        level = _water_level([len(triples) for triples in per_step], open_, cap)
        short = [i for i in sorted(open_) if asked[i] < level]
        if not short:
            break
        for i in short:
            per_step[i], asked[i] = read(steps[i], level), level
    counts = _taken_in_turn([len(triples) for triples in per_step], cap)
    chosen = [t for triples, n in zip(per_step, counts, strict=True) for t in triples[:n]]
    return chosen, sum(1 for n in counts if n)


def _water_level(sizes: list[int], open_: set[int], cap: int) -> int:
    """How deep taking in turn goes for ``cap`` items, were the lists in ``open_``
    endless: the smallest level at which the lists give ``cap`` (the cap itself when
    even that is short).

    >>> _water_level([1, 5, 2], {1}, 6)
    3
    """

    def given(level: int) -> int:
        return sum(level if i in open_ else min(size, level) for i, size in enumerate(sizes))

    low, high = 1, max(1, cap)
    while low < high:
        middle = (low + high) // 2
        if given(middle) >= cap:
            high = middle
        else:
            low = middle + 1
    return low


def _taken_in_turn(sizes: list[int], cap: int) -> list[int]:
    """How many of each list one at a time from each in turn takes, up to ``cap`` in all.

    >>> _taken_in_turn([1, 5, 2], 6)
    [1, 3, 2]
    >>> _taken_in_turn([1, 5, 2], 100)
    [1, 5, 2]
    """
    if sum(sizes) <= cap:
        return list(sizes)
    level = _water_level(sizes, set(), cap)  # the layer in which the cap is reached
    counts = [min(size, level - 1) for size in sizes]
    left = cap - sum(counts)
    for i, size in enumerate(sizes):  # that layer, in order, until the cap
        if left and size >= level:
            counts[i] += 1
            left -= 1
    return counts

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

SPREAD_WINDOW = 100  # edges of one relation a read's sample is drawn from, at least
SPREAD_ROUNDS = 3  # reads of the relations that filled their share, after the first


def spread_neighbors(
    graph: KnowledgeGraph, entity: NamedNode, cap: int
) -> tuple[list[Triple], int]:
    """At most ``cap`` triples around ``entity`` (both directions), taken in turn from
    each of its relations, and how many relations they hold. The triples come relation
    by relation, outgoing ones first, then by predicate; within a relation in the
    order ``follow`` gives them from a window of ``max(n, SPREAD_WINDOW)`` edges.

    Not every relation read up to the cap: first each relation's even share, then the
    ones that filled theirs again, at a level raised by what the others left, a few
    rounds, the last one raised by all that is left. Taking in turn never needs more
    from one relation than that (``_taken_in_turn``), so the result is what reading
    each relation up to the cap gives (the same where ``cap <= SPREAD_WINDOW``; past it
    a relation's sample is drawn from a window of its own read), for a few times the
    cap in rows, not the relations times the cap."""
    if cap <= 0:
        return [], 0
    steps = sorted(graph.relation_steps([entity]), key=lambda s: (not s[1], s[0].value))[:cap]
    if not steps:
        return [], 0

    def read(step: RelationStep, n: int) -> list[Triple]:
        walks = graph.follow(entity, (step,), limit=n, window=max(n, SPREAD_WINDOW))
        return [walk.hops[0].triple for walk in walks]

    level = -(-cap // len(steps))
    per_step = [read(step, level) for step in steps]
    for round_ in range(1, SPREAD_ROUNDS + 1):
        full = [i for i, triples in enumerate(per_step) if len(triples) == level]
        left = cap - sum(len(triples) for triples in per_step)
        if left <= 0 or not full:
            break
        level += -(-left // len(full)) if round_ < SPREAD_ROUNDS else left
        for i in full:
            per_step[i] = read(steps[i], level)
    counts = _taken_in_turn([len(triples) for triples in per_step], cap)
    chosen = [t for triples, n in zip(per_step, counts, strict=True) for t in triples[:n]]
    return chosen, sum(1 for n in counts if n)


def _taken_in_turn(sizes: list[int], cap: int) -> list[int]:
    """How many of each list one at a time from each in turn takes, up to ``cap`` in all.

    >>> _taken_in_turn([1, 5, 2], 6)
    [1, 3, 2]
    """
    counts = [0] * len(sizes)
    taken = 0
    for depth in range(cap):
        for i, size in enumerate(sizes):
            if depth < size and taken < cap:
                counts[i] += 1
                taken += 1
        if taken >= cap or all(depth >= size for size in sizes):
            break
    return counts

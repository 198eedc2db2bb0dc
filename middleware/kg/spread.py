"""A hub's neighbours spread over its relations, not one sample of its edges.

Past ``SORT_WINDOW`` edges a node's neighbours are read from a sample in the engine's
order (``neighbors``), and a hub's sample is whatever relation its edges happen to
come first in: at 100 copies of FB15k-237, Austria's first 100 neighbours hold 2
relations, all edges to places, against 19 (its capital among them) in the graph of
one copy. Spread, the read takes edges of each relation the hub has in turn
(``relation_steps``, which probes a hub predicate by predicate), so what a question
asks about is there at any size. Each relation is read for its share, the first
edges in the engine's own order, unsorted (``kg/step_reads.py``), so the rows read are
about the cap. When a hub has more relations than the cap, the first by predicate are
read. On a graph whose predicates are probed (at most ``MAX_PREDICATES``), the cost is
set by the hub's relations and the cap, not by its degree.

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


def spread_neighbors(
    graph: KnowledgeGraph, entity: NamedNode, cap: int
) -> tuple[list[Triple], int]:
    """At most ``cap`` triples around ``entity`` (both directions), taken in turn from
    each of its relations, and how many relations they hold. The triples come relation
    by relation, outgoing ones first, then by predicate; within a relation, the first
    the engine gives. The same as reading every relation up to the cap and then taking
    one edge at a time from each in turn, at a cost near the cap in rows:

    1. each relation is read for its even share of the cap;
    2. if that gave fewer than the cap, the relations that filled their share are
       counted (up to what one of them can take), and those that taking in turn gives
       more are read on, past the edges read already.
    """
    if cap <= 0:
        return [], 0
    steps = sorted(graph.relation_steps([entity]), key=lambda s: (not s[1], s[0].value))[:cap]
    if not steps:
        return [], 0
    share = -(-cap // len(steps))
    version = graph.version
    per_step = graph.step_edges(entity, [(step, share) for step in steps])
    sizes = [len(triples) for triples in per_step]
    if sum(sizes) < cap:  # a relation short of its share is whole: count the others
        full = [i for i, size in enumerate(sizes) if size == share]
        # what one of them can take: the cap less the whole ones and the others' shares
        most = cap - (sum(sizes) - len(full) * share) - (len(full) - 1) * share
        counted = graph.step_sizes(entity, [steps[i] for i in full], cap=most)
        for i, size in zip(full, counted, strict=True):
            sizes[i] = size
    counts = _taken_in_turn(sizes, cap)
    more = [i for i, n in enumerate(counts) if n > len(per_step[i])]
    more_set = set(more)
    rest = graph.step_edges(
        entity,
        [(steps[i], counts[i] - len(per_step[i])) for i in more],
        after=[len(per_step[i]) for i in more],
    )
    if graph.version != version:  # a load landed meanwhile: the edges after may shift
        rest = graph.step_edges(entity, [(steps[i], counts[i]) for i in more])
        per_step = [[] if i in more_set else t for i, t in enumerate(per_step)]
    for i, triples in zip(more, rest, strict=True):
        per_step[i] = list(dict.fromkeys(per_step[i] + triples))  # read on past the share
    chosen = [t for triples, n in zip(per_step, counts, strict=True) for t in triples[:n]]
    return chosen, sum(1 for n in counts if n)


def _level(sizes: list[int], cap: int) -> int:
    """The layer in which taking one at a time from each list in turn reaches ``cap``
    items: the smallest depth at which the lists give ``cap``.

    >>> _level([1, 5, 2], 6)
    3
    """
    low, high = 1, max(1, cap)
    while low < high:
        middle = (low + high) // 2
        if sum(min(size, middle) for size in sizes) >= cap:
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
    level = _level(sizes, cap)
    counts = [min(size, level - 1) for size in sizes]
    left = cap - sum(counts)
    for i, size in enumerate(sizes):  # that layer, in order, until the cap
        if left and size >= level:
            counts[i] += 1
            left -= 1
    return counts

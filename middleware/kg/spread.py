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


def spread_neighbors(
    graph: KnowledgeGraph, entity: NamedNode, cap: int
) -> tuple[list[Triple], int]:
    """At most ``cap`` triples around ``entity`` (both directions), taken in turn from
    each of its relations, and how many relations they hold. The triples come relation
    by relation, outgoing ones first, then by predicate; within a relation in the
    engine's order by the other end, as ``follow`` gives them."""
    if cap <= 0:
        return [], 0
    steps = sorted(graph.relation_steps([entity]), key=lambda s: (not s[1], s[0].value))
    # up to the cap from each relation, so the rarer ones' share goes to the others
    per_step = [
        [walk.hops[0].triple for walk in graph.follow(entity, (step,), limit=cap, window=cap)]
        for step in steps[:cap]
    ]
    counts = [0] * len(per_step)
    taken = 0
    for depth in range(cap):
        for i, triples in enumerate(per_step):
            if depth < len(triples) and taken < cap:
                counts[i] += 1
                taken += 1
        if taken >= cap:
            break
    chosen = [t for triples, n in zip(per_step, counts, strict=True) for t in triples[:n]]
    return chosen, sum(1 for n in counts if n)

"""A hub's neighbours spread over its relations, not a sample of its busiest one.

Past ``SORT_WINDOW`` edges a node's neighbours are read from a sample in the engine's
order (``neighbors``), and at a hub that sample is mostly its commonest relation: at
100 copies of FB15k-237, Austria's first 100 neighbours hold 2 relations, all edges to
places, against 19 (its capital among them) in the graph of one copy. Spread, the
read takes a few edges of each relation the hub has (``relation_steps``, which probes
a hub predicate by predicate), so what a question asks about is there at any size.
The cost is set by the hub's relations and the cap (each relation reads at most the
cap), not by its degree.

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

from middleware.kg.base import Direction, KnowledgeGraph, Triple


def spread_neighbors(
    graph: KnowledgeGraph, entity: NamedNode, cap: int, direction: Direction = "both"
) -> tuple[list[Triple], int]:
    """At most ``cap`` triples around ``entity``, taken in turn from each of its
    relations (outgoing first, then by predicate and other end; each relation read
    from a window of its own edges in the engine's order), and how many relations
    (a predicate and a direction) it has."""
    steps = [
        (p, forward)
        for p, forward in graph.relation_steps([entity])
        if direction == "both" or forward == (direction == "out")
    ]
    if not steps or cap <= 0:
        return [], len(steps)
    # up to the cap from each relation, so the rarer ones' share goes to the others
    per_step = [
        [walk.hops[0].triple for walk in graph.follow(entity, (step,), limit=cap, window=cap)]
        for step in steps
    ]
    taken: list[Triple] = []
    for depth in range(cap):
        for triples in per_step:
            if depth < len(triples) and len(taken) < cap:
                taken.append(triples[depth])
        if len(taken) >= cap:
            break
    return sorted(taken, key=lambda t: _order(t, entity)), len(steps)


def _order(triple: Triple, entity: NamedNode) -> tuple[bool, str, str]:
    """``neighbors``' order: outgoing first, then by predicate and the other end."""
    outgoing = triple.subject == entity
    other = triple.object if outgoing else triple.subject
    return (not outgoing, triple.predicate.value, str(other))

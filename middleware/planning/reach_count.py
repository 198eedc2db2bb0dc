"""What a relation path reaches from a topic, counted where the walk ends.

Mining scores a candidate path by the gold answers it reaches and by how many other
entities it reaches (``mining.py``). The steps before the last are walked as ``reach``
walks them (the same samples, shared through ``taken``); the last step is counted in
the engine by ``sparql/mine_step_count.rq``, over the same sample ``mine_step.rq``
reads, and only the wanted entities found among it come back. At 100 copies of
FB15k-237, decoding the 2,000 entities of a full step cost about four times counting
them. The sample is the same where the engine reads the counting query's subquery in
the order it reads ``mine_step.rq`` (Oxigraph does; a test compares them, and on
other engines the conformance test compares them where no step is cut). A last step
counted and walked on later, by a longer path, is one step of the question's budget.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text(
...     "Heat|directed_by|Michael Mann\\nCollateral|directed_by|Michael Mann\\n"
...     "Thief|directed_by|Michael Mann\\n", name="kb.txt")
>>> iri = lambda name: kg.search(name)[0].iri
>>> from middleware.planning.path_search import relation_paths
>>> same_director = relation_paths(kg, iri("Heat"), iri("Thief"), max_hops=2)[0]
>>> found = reach_count(kg, iri("Heat"), same_director, {iri("Thief")})
>>> [a.value.rsplit("/", 1)[-1] for a in found.answers], found.count
(['Thief'], 2)
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode

from middleware.kg.base import KnowledgeGraph
from middleware.kg.terms import Term
from middleware.kg.walks import RelationPath
from middleware.planning.path_search import (
    SearchBudget,
    StepsTaken,
    budgeted_select,
    reach,
    step_nodes,
)


@dataclass(frozen=True)
class Reached:
    """Where a relation path led: the wanted entities among its ends, and how many
    distinct ends it reached in all (wanted or not)."""

    answers: frozenset[Term]
    count: int

    @property
    def others(self) -> int:
        """How many of the ends are not wanted."""
        return self.count - len(self.answers)


def reach_count(
    graph: KnowledgeGraph,
    start: NamedNode,
    path: RelationPath,
    wanted: Set[NamedNode],
    *,
    limit: int = 2000,
    budget: SearchBudget | None = None,
    taken: StepsTaken | None = None,
) -> Reached:
    """What ``reach(graph, start, path, limit=limit)`` returns, as the ``wanted``
    entities among it and its size, with the last step counted in the engine."""
    if not path:
        return Reached(frozenset({start} & set(wanted)), 1)
    whole = (start, tuple(path), limit)
    if taken is not None and whole in taken:
        ends = set(taken[whole])
        return Reached(frozenset(ends & wanted), len(ends))
    before = reach(graph, start, tuple(path[:-1]), limit=limit, budget=budget, taken=taken)
    nodes = step_nodes(before, limit)
    if not nodes:
        return Reached(frozenset(), 0)
    rows = budgeted_select(
        graph,
        budget,
        "mine_step_count",
        nodes=nodes,
        step=path[-1],
        limit=limit,
        start=start,
        wanted=sorted(wanted, key=str),
    )
    if taken is not None:
        taken.counted.add(whole)
    row = rows[0] if rows else {}
    count, hits = row.get("reached"), row.get("hits")
    # IRIs may hold other Unicode spaces; U+0020 never
    found = [iri for iri in hits.value.split(" ") if iri] if isinstance(hits, Literal) else []
    return Reached(
        frozenset(NamedNode(iri) for iri in found),
        int(count.value) if isinstance(count, Literal) else 0,
    )

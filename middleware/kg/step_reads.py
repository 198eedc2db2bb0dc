"""A node's edges read relation by relation: how many each relation has, up to a cap,
and the first ``n`` of each in the engine's own order.

A hub's neighbours are read from each of its relations in turn (``kg/spread.py``). Its
reads must not cost the hub's degree, and a read of fewer edges must give the first of
a larger one's, so that a relation read for its share and one read again for more
agree: ``step_edges`` reads the first ``n`` edges unsorted (``sparql/step_edges.rq``),
and ``step_sizes`` counts at most ``cap`` (``sparql/step_sizes.rq``); a read ``after``
the first edges gives the next ones, so a relation read again for more reads only those.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|starred_actors|Al Pacino\\n"
...                  "Heat|starred_actors|Robert De Niro\\n", name="kb.txt")
>>> heat = kg.search("Heat")[0].iri
>>> steps = kg.relation_steps([heat])
>>> kg.step_sizes(heat, steps, cap=5)
[1, 2]
>>> [[t.object.value.rsplit("/", 1)[-1] for t in read]
...  for read in kg.step_edges(heat, [(steps[0], 1), (steps[1], 0)])]
[['Michael%20Mann'], []]
"""

from __future__ import annotations

from collections.abc import Sequence

from pyoxigraph import BlankNode, Literal, NamedNode

from middleware.kg.base import Triple
from middleware.kg.transport_stubs import VersionedTransport

RelationStep = tuple[NamedNode, bool]


class StepReads(VersionedTransport):
    """Per-relation counts and reads at one node (mixed into ``GraphOperations``)."""

    name: str

    def step_sizes(
        self, entity: NamedNode, steps: Sequence[RelationStep], *, cap: int
    ) -> list[int]:
        """How many edges each step has at ``entity`` (the other end not ``entity``
        itself), each counted up to ``cap``; one query a step."""
        found = []
        for step in steps:
            rows = self._select("step_sizes", entity=entity, step=step, cap=max(0, cap))
            count = rows[0].get("n") if rows else None
            found.append(int(count.value) if isinstance(count, Literal) else 0)
        return found

    def step_edges(
        self,
        entity: NamedNode,
        reads: Sequence[tuple[RelationStep, int]],
        *,
        after: Sequence[int] | None = None,
    ) -> list[list[Triple]]:
        """For each ``(step, n)``, the first ``n`` edges of that step at ``entity`` in
        the engine's own order (``after``: past the first that many of each), as
        triples (the other end not ``entity`` itself); one query a read, none for
        ``n`` = 0."""
        skipped = list(after) if after is not None else [0] * len(reads)
        found: list[list[Triple]] = []
        for ((predicate, forward), n), offset in zip(reads, skipped, strict=True):
            triples: list[Triple] = []
            found.append(triples)
            if n <= 0:
                continue
            step = (predicate, forward)
            for row in self._select(
                "step_edges", entity=entity, step=step, n=n, offset=max(0, offset)
            ):
                other = row.get("x")
                if forward and isinstance(other, NamedNode | BlankNode | Literal):
                    triples.append(Triple(entity, predicate, other, self.name))
                elif not forward and isinstance(other, NamedNode | BlankNode):
                    triples.append(Triple(other, predicate, entity, self.name))
        return found

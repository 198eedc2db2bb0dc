"""Entity samples by role: the subjects or objects of one predicate, a bounded slice.

A path memory learned from the graph alone needs topics from every kind of entity the
graph holds; with no classes to go by, a kind is reached through the relations that
touch it, so topics are sampled per predicate and side.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|in_language|English\\n", name="kb.txt")
>>> directed_by = kg.relation_steps([kg.search("Heat")[0].iri])[0][0]
>>> [e.value.rsplit("/", 1)[-1] for e in kg.sample_ends(directed_by, subjects=False, limit=5)]
['Michael%20Mann']
>>> kg.step_shares([kg.search("Heat")[0].iri], [directed_by]) == {(directed_by, True): 1.0}
True
"""

from __future__ import annotations

from collections.abc import Sequence

from pyoxigraph import Literal, NamedNode

from middleware.kg.terms import Term

STEP_SAMPLE = 100  # entities one ``step_shares`` query reads (each an index lookup per step)


class EntitySampling:
    """Samples of a predicate's subjects or objects (mixed into ``GraphOperations``)."""

    def _select(self, template: str, /, **bindings: object) -> list[dict[str, Term]]:
        raise NotImplementedError  # the transport, from GraphOperations

    def sample_ends(
        self, predicate: NamedNode, *, subjects: bool, limit: int, offset: int = 0
    ) -> list[NamedNode]:
        """Up to ``limit`` distinct IRIs that are subjects (or objects) of ``predicate``,
        skipping the first ``offset`` in the engine's own order. Nothing is sorted, but
        DISTINCT reads uses until it has ``offset + limit`` distinct entities: a side
        with few of them (three genres over a million films) is read whole, and an
        offset past them finds nothing (the caller then reads from the start)."""
        rows = self._select(
            "sample_subjects" if subjects else "sample_objects",
            predicate=predicate,
            limit=max(1, limit),
            offset=max(0, offset),
        )
        return [e for row in rows if isinstance(e := row.get("e"), NamedNode)]

    def step_shares(
        self, nodes: Sequence[NamedNode], predicates: Sequence[NamedNode]
    ) -> dict[tuple[NamedNode, bool], float]:
        """Of ``nodes`` (the first ``STEP_SAMPLE``), the share that has each relation step
        (predicate, forward) over ``predicates``; steps none has are left out."""
        sample = list(dict.fromkeys(nodes))[:STEP_SAMPLE]
        if not sample or not predicates:
            return {}
        rows = self._select("step_shares", nodes=sample, predicates=list(dict.fromkeys(predicates)))
        found: dict[tuple[NamedNode, bool], float] = {}
        for row in rows:
            predicate, forward, count = row.get("p"), row.get("forward"), row.get("n")
            if not (isinstance(predicate, NamedNode) and isinstance(forward, Literal)):
                continue
            if isinstance(count, Literal) and int(count.value) > 0:
                found[(predicate, forward.value in ("true", "1"))] = int(count.value) / len(sample)
        return found

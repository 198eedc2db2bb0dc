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
"""

from __future__ import annotations

from pyoxigraph import NamedNode

from middleware.kg.terms import Term


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

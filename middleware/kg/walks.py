"""Relation paths: the steps that leave some entities, and where a path leads from one.

A relation path is a sequence of steps, each a predicate and a direction (``True``:
from subject to object). ``follow`` walks one from a start entity with one query
(``sparql/follow_N.rq``) and returns each walk as a :class:`Path`; no walk revisits a
node or comes back through the start. ``relation_steps`` lists the steps available
from a set of entities, so candidate paths can be grown hop by hop, bounded.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|in_language|English\\n", name="kb.txt")
>>> mann = kg.search("Michael Mann")[0].iri
>>> steps = kg.relation_steps([mann])
>>> [(p.value.rsplit("/", 1)[-1], forward) for p, forward in steps]
[('directed_by', False)]
>>> walk = kg.follow(mann, (steps[0], (kg.relation_steps([kg.search("Heat")[0].iri])[1])))
>>> [n.value.rsplit("/", 1)[-1] for n in walk[0].nodes]
['Michael%20Mann', 'Heat', 'English']
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path as FilePath

from pyoxigraph import Literal, NamedNode

from middleware.errors import BadRequest
from middleware.kg.base import MAX_LIMIT, SORT_WINDOW, Capabilities, Hop, Path, Triple
from middleware.kg.profiles import Profile
from middleware.kg.terms import Term
from middleware.kg.vocabulary_file import keep, kept

RelationStep = tuple[NamedNode, bool]
RelationPath = tuple[RelationStep, ...]
MAX_STEPS = 3
NODES_PER_QUERY = 200


STEPS_WINDOW = 20_000  # edges read for the relation steps of a batch before probing
MAX_PREDICATES = 2_000  # a graph with more is not probed predicate by predicate
_VOCABULARIES: weakref.WeakKeyDictionary[object, tuple[int, list[NamedNode] | None]] = (
    weakref.WeakKeyDictionary()
)
STEPS_KEPT = 4_096  # batches whose steps a graph keeps (least recently used out)
_StepsKey = tuple[int, int, tuple[str, ...]]  # version, limit, the batch's IRIs
_STEPS: weakref.WeakKeyDictionary[object, OrderedDict[_StepsKey, tuple[RelationStep, ...]]] = (
    weakref.WeakKeyDictionary()
)
_STEPS_LOCK = threading.Lock()


def _count(term: Term | None) -> int:
    return int(term.value) if isinstance(term, Literal) else 0


class RelationWalks:
    """Relation-path operations of a graph (mixed into ``GraphOperations``)."""

    name: str
    capabilities: Capabilities
    profile: Profile

    @property
    def version(self) -> int:
        raise NotImplementedError  # from GraphOperations

    def _select(self, template: str, **bindings: object) -> list[dict[str, Term]]:
        raise NotImplementedError  # the transport, from GraphOperations

    def refresh(self) -> bool:
        raise NotImplementedError  # from GraphOperations

    def _common_bindings(self) -> dict[str, object]:
        raise NotImplementedError  # from GraphOperations

    def relation_steps(
        self, nodes: Sequence[NamedNode], *, limit: int = 1000
    ) -> list[RelationStep]:
        """Distinct (predicate, forward) steps leaving any of ``nodes``, sorted. A store
        in this process reads a batch's steps once per version of its data."""
        found: dict[RelationStep, None] = {}
        iris = [n for n in dict.fromkeys(nodes) if isinstance(n, NamedNode)]
        for start in range(0, len(iris), NODES_PER_QUERY):
            batch = iris[start : start + NODES_PER_QUERY]
            for step in self._batch_steps(batch, min(limit, MAX_LIMIT)):
                found.setdefault(step, None)
        return sorted(found, key=lambda step: (step[0].value, not step[1]))[:limit]

    def _batch_steps(self, nodes: list[NamedNode], limit: int) -> tuple[RelationStep, ...]:
        self.refresh()  # first: a reader moves to a load another process swapped in
        key = (self.version, limit, tuple(node.value for node in nodes))
        if self.capabilities.in_process:
            with _STEPS_LOCK:
                known = _STEPS.get(self)
                if known is not None and key in known:
                    known.move_to_end(key)
                    return known[key]
        steps = []
        for row in self._steps_rows(nodes, limit):
            predicate, forward = row.get("p"), row.get("forward")
            if isinstance(predicate, NamedNode) and isinstance(forward, Literal):
                steps.append((predicate, forward.value in ("true", "1")))
        if self.capabilities.in_process:  # a remote graph cannot tell when it changes
            with _STEPS_LOCK:
                kept_steps = _STEPS.setdefault(self, OrderedDict())
                kept_steps[key] = tuple(steps)
                if len(kept_steps) > STEPS_KEPT:
                    kept_steps.popitem(last=False)
        return tuple(steps)

    def _steps_rows(self, nodes: list[NamedNode], limit: int) -> list[dict[str, Term]]:
        """The steps of ``nodes``. In a store in this process: from a window of their
        edges, or, when a hub fills it, by probing the hubs for each of the graph's
        predicates (a cost set by the window and the predicates, not by the hub) and
        reading the others' own edges; elsewhere (an endpoint, a profile with its own
        ``relation_steps``) from all their edges."""
        common = self._common_bindings()
        if not self.capabilities.in_process or "relation_steps" in self.profile.templates:
            return self._select("relation_steps", nodes=nodes, limit=limit, **common)
        rows = self._select("relation_steps_window", nodes=nodes, window=STEPS_WINDOW, **common)
        if sum(_count(row.get("n")) for row in rows) < STEPS_WINDOW:
            return rows
        predicates = self.relation_vocabulary()
        if predicates is None:
            return self._select("relation_steps", nodes=nodes, limit=limit, **common)
        # only the hubs are probed (each probe costs every predicate, both ways); the
        # others' edges are read again without them, and probed too only if they fill it
        hubs = self._hubs(nodes) if len(nodes) > 1 else nodes
        rest = [n for n in nodes if n not in hubs]
        read: list[dict[str, Term]] = []
        probed = nodes
        if hubs and rest:
            read = self._select("relation_steps_window", nodes=rest, window=STEPS_WINDOW, **common)
            if sum(_count(row.get("n")) for row in read) < STEPS_WINDOW:
                probed = hubs
        rows = self._select(
            "relation_steps_probe", nodes=probed, predicates=predicates, limit=limit, **common
        )
        if probed is nodes:
            return rows
        merged = {(row.get("p"), row.get("forward")): row for row in [*read, *rows]}
        return list(merged.values())

    def _hubs(self, nodes: list[NamedNode]) -> list[NamedNode]:
        """The nodes with at least ``SORT_WINDOW`` edges (each counted only up to it)."""
        common = self._common_bindings()
        found = []
        for node in nodes:
            rows = self._select("degree_capped", entity=node, cap=SORT_WINDOW, **common)
            if rows and _count(rows[0].get("n")) >= SORT_WINDOW:
                found.append(node)
        return found

    def vocabulary_file(self) -> FilePath | None:
        """Where this version's predicates are kept for later processes (None: nowhere;
        a store on disk keeps them in its live generation's folder)."""
        return None

    def relation_vocabulary(self) -> list[NamedNode] | None:
        """The graph's predicates (label and ignored ones left out), read once per
        version (and kept in ``vocabulary_file``); None when there are more than
        ``MAX_PREDICATES`` to probe."""
        cached = _VOCABULARIES.get(self)
        if cached is None or cached[0] != self.version:
            where = self.vocabulary_file()  # first: it moves a reader to the live version
            version, skipped = self.version, [str(p) for p in self.profile.skipped_predicates]
            found = kept(where, skipped)
            if found is None:
                rows = self._select(
                    "predicates", limit=MAX_PREDICATES + 1, **self._common_bindings()
                )
                named = sorted((p for r in rows if isinstance(p := r.get("p"), NamedNode)), key=str)
                found = (named if len(named) <= MAX_PREDICATES else None,)
                if self.vocabulary_file() == where:  # no load swapped the data meanwhile
                    keep(where, skipped, found[0])
            cached = (version, found[0])
            _VOCABULARIES[self] = cached
        return cached[1]

    def follow(
        self, start: NamedNode, path: RelationPath, *, limit: int = 1000, window: int = SORT_WINDOW
    ) -> list[Path]:
        """The walks of ``path`` from ``start`` (at most ``limit``), as graph paths; past
        ``window`` walks (a hub), those of a sample in the engine's own order: the sort
        costs at most ``max(limit, window)`` walks, not the hub's degree."""
        if not 1 <= len(path) <= MAX_STEPS:
            raise BadRequest(f"a relation path has 1 to {MAX_STEPS} steps, got {len(path)}")
        if not isinstance(start, NamedNode):
            raise BadRequest(f"a relation path starts at an IRI, got {start}")
        steps = {f"step{i}": (p, bool(f)) for i, (p, f) in enumerate(path, start=1)}
        cut = min(limit, MAX_LIMIT)
        rows = self._select(
            f"follow_{len(path)}", start=start, limit=cut, window=max(cut, window), **steps
        )
        walks = []
        for row in rows:
            nodes: list[Term] = [start] + [row[f"n{i}"] for i in range(1, len(path) + 1)]
            hops = []
            for (predicate, forward), here, there in zip(path, nodes, nodes[1:], strict=False):
                if forward and not isinstance(here, Literal):
                    hops.append(Hop(Triple(here, predicate, there, self.name), True))
                elif not forward and not isinstance(there, Literal):
                    hops.append(Hop(Triple(there, predicate, here, self.name), False))
            if len(hops) == len(path):
                walks.append(Path(tuple(hops)))
        return walks

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
from typing import TYPE_CHECKING

from pyoxigraph import Literal, NamedNode

from middleware.errors import BadRequest
from middleware.kg.base import MAX_LIMIT, SORT_WINDOW, Capabilities, Hop, Path, Triple
from middleware.kg.ordered_rows import Ordering
from middleware.kg.profiles import Profile
from middleware.kg.terms import Term
from middleware.kg.transport_stubs import VersionedTransport
from middleware.kg.vocabulary_file import FILE_NAME as VOCABULARY_FILE
from middleware.kg.vocabulary_file import keep, kept

RelationStep = tuple[NamedNode, bool]
RelationPath = tuple[RelationStep, ...]
MAX_STEPS = 3
NODES_PER_QUERY = 200


STEPS_WINDOW = 20_000  # edges read for the relation steps of a batch before probing
MIDDLE_WINDOW = 20_000  # pairs of first and second ends a three-step walk reads at most
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
HUBS_KEPT = 20_000  # hubs whose probed steps a graph keeps (least recently used out)
_HUB_STEPS: weakref.WeakKeyDictionary[
    object, OrderedDict[tuple[int, str], tuple[RelationStep, ...]]
] = weakref.WeakKeyDictionary()


def _window(nodes: list[NamedNode], owned: bool) -> int:
    """Edges a batch's steps are read from before its hubs are probed: nodes under the
    hub threshold have fewer than ``SORT_WINDOW`` edges each, so a batch that fills
    ``SORT_WINDOW`` per node holds a hub; a few nodes need not read ``STEPS_WINDOW``.
    Only where every change moves the version (``owned``): elsewhere the predicate
    list the probes use may be stale, so only hubs past ``STEPS_WINDOW`` rely on it.

    >>> a = NamedNode("http://ex.org/a")
    >>> _window([a], owned=True) == SORT_WINDOW, _window([a], owned=False) == STEPS_WINDOW
    (True, True)
    """
    return min(STEPS_WINDOW, SORT_WINDOW * len(nodes)) if owned else STEPS_WINDOW


def _count(term: Term | None) -> int:
    return int(term.value) if isinstance(term, Literal) else 0


def _steps(rows: list[dict[str, Term]]) -> list[RelationStep]:
    """The (predicate, forward) steps of result rows."""
    found = []
    for row in rows:
        predicate, forward = row.get("p"), row.get("forward")
        if isinstance(predicate, NamedNode) and isinstance(forward, Literal):
            found.append((predicate, forward.value in ("true", "1")))
    return found


class RelationWalks(VersionedTransport):
    """Relation-path operations of a graph (mixed into ``GraphOperations``); hubs' steps
    are kept for other batches only where every change moves the version."""

    name: str
    capabilities: Capabilities
    profile: Profile

    if TYPE_CHECKING:  # from DegreeCounts; declared for type checking only, as a stub
        # here would come before it in GraphOperations' order and hide it

        def degrees(
            self, entities: Sequence[NamedNode], *, at_most: int | None = None, window: bool = True
        ) -> dict[NamedNode, int]: ...

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
        steps = self._steps_of(nodes, limit)
        if self.capabilities.in_process:  # a remote graph cannot tell when it changes
            with _STEPS_LOCK:
                kept_steps = _STEPS.setdefault(self, OrderedDict())
                kept_steps[key] = tuple(steps)
                if len(kept_steps) > STEPS_KEPT:
                    kept_steps.popitem(last=False)
        return tuple(steps)

    def _steps_of(self, nodes: list[NamedNode], limit: int) -> list[RelationStep]:
        """The steps of ``nodes``. In a store in this process: from a window of their
        edges; when that fills, the hubs among them (``SORT_WINDOW`` edges or more) are
        probed for each of the graph's predicates, one at a time and kept per version of
        the data (a cost set by the predicates, not by the hub), and the others' own
        edges are read. Elsewhere (an endpoint, a profile with its own
        ``relation_steps``): from all their edges."""
        common = self._common_bindings()
        if not self.capabilities.in_process or "relation_steps" in self.profile.templates:
            return _steps(self._select("relation_steps", nodes=nodes, limit=limit, **common))
        kept = self._kept_hubs(nodes)
        found = dict.fromkeys(step for steps in kept.values() for step in steps)
        left = [n for n in nodes if n not in kept]
        if not left:
            return list(found)
        window = _window(left, self.versions_every_change)
        rows = self._select("relation_steps_window", nodes=left, window=window, **common)
        if sum(_count(row.get("n")) for row in rows) < window:
            return list(found | dict.fromkeys(_steps(rows)))
        predicates = self.relation_vocabulary()
        if predicates is None:
            return _steps(self._select("relation_steps", nodes=nodes, limit=limit, **common))
        hubs = self._hubs(left) if len(left) > 1 else left
        for hub in hubs:
            probed = self._probe([hub], predicates)
            self._keep_hub(hub, probed)
            found.update(dict.fromkeys(probed))
        rest = [n for n in left if n not in hubs]
        if rest:
            rows, window = [], _window(rest, self.versions_every_change)
            if hubs:  # without them the others' edges may fit the window
                rows = self._select("relation_steps_window", nodes=rest, window=window, **common)
            if not hubs or sum(_count(row.get("n")) for row in rows) >= window:
                found.update(dict.fromkeys(self._probe(rest, predicates)))
            else:
                found.update(dict.fromkeys(_steps(rows)))
        return list(found)

    def _probe(self, nodes: list[NamedNode], predicates: list[NamedNode]) -> list[RelationStep]:
        """The steps of ``nodes``, probed predicate by predicate (each an index lookup)."""
        rows = self._select(
            "relation_steps_probe",
            nodes=nodes,
            predicates=predicates,
            limit=MAX_LIMIT,
            **self._common_bindings(),
        )
        return _steps(rows)

    def _hubs(self, nodes: list[NamedNode]) -> list[NamedNode]:
        """The nodes with at least ``SORT_WINDOW`` edges (each counted only up to it, on
        its own: their edges have just filled a window)."""
        counts = self.degrees(nodes, at_most=SORT_WINDOW, window=False)
        return [node for node in nodes if counts[node] >= SORT_WINDOW]

    def _kept_hubs(self, nodes: list[NamedNode]) -> dict[NamedNode, tuple[RelationStep, ...]]:
        """The probed steps kept for those of ``nodes`` known as hubs at this version."""
        if not self.versions_every_change:
            return {}
        with _STEPS_LOCK:
            kept = _HUB_STEPS.get(self)
            if not kept:
                return {}
            found = {}
            for node in nodes:
                key = (self.version, node.value)
                if key in kept:
                    kept.move_to_end(key)
                    found[node] = kept[key]
            return found

    def _keep_hub(self, hub: NamedNode, steps: list[RelationStep]) -> None:
        if not self.versions_every_change:
            return
        with _STEPS_LOCK:
            kept = _HUB_STEPS.setdefault(self, OrderedDict())
            kept[(self.version, hub.value)] = tuple(steps)
            if len(kept) > HUBS_KEPT:
                kept.popitem(last=False)

    def index_folder(self) -> FilePath | None:
        """Where files derived from this version of the data are kept for later
        processes (None: nowhere; a store on disk keeps them in its live generation's
        folder, which never changes)."""
        return None

    def vocabulary_file(self) -> FilePath | None:
        """Where this version's predicates are kept for later processes (None: nowhere)."""
        folder = self.index_folder()
        return None if folder is None else folder / VOCABULARY_FILE

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
        if not isinstance(limit, int) or limit < 0:
            raise BadRequest(f"a walk limit is a whole number of at least 0, got {limit!r}")
        steps = {f"step{i}": (p, bool(f)) for i, (p, f) in enumerate(path, start=1)}
        cut = min(limit, MAX_LIMIT)
        order = Ordering(tuple(f"n{i}" for i in range(len(path), 0, -1)), cut)  # last first
        # ``limit`` too: a profile's own template may still cut the walks itself
        window = max(cut, window)
        # a three-step walk's pairs of first and second ends are cut too
        middle = {"middle": max(window, MIDDLE_WINDOW)} if len(path) == 3 else {}
        rows = self._select(
            f"follow_{len(path)}", order, start=start, limit=cut, window=window, **steps, **middle
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

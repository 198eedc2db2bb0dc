"""How many relation triples touch an entity: exact, or counted up to a cap.

Ranking linked entities prefers the better connected one; past a few thousand edges
every candidate is a hub, and counting a hub's edges costs their number (a country of
a graph copied 100 times: 23 ms a count). ``at_most`` stops counting there.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|in_language|English\\n", name="kb.txt")
>>> heat = kg.search("Heat")[0].iri
>>> kg.degree(heat), kg.degree(heat, at_most=1), kg.degrees([heat], at_most=5)[heat]
(2, 1, 2)
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence

from pyoxigraph import Literal, NamedNode

from middleware.kg.base import SORT_WINDOW, Capabilities
from middleware.kg.terms import Term, to_iri
from middleware.kg.transport_stubs import VersionedTransport

DEGREE_BATCH = 200  # entities one ``degrees`` query counts
DEGREES_WINDOW = 20_000  # edges one capped batch count reads before counting each entity
DEGREES_KEPT = 100_000  # capped counts each store keeps (least recently used out)
_Kept = OrderedDict[tuple[int, str], int]  # (cap, the entity's IRI) -> count
# per store: the version its counts were read at, and the counts (a new version drops them)
_DEGREES: weakref.WeakKeyDictionary[object, tuple[int, _Kept]] = weakref.WeakKeyDictionary()
_DEGREES_LOCK = threading.Lock()


def _count(rows: list[dict[str, Term]]) -> int:
    value = rows[0].get("n") if rows else None
    return int(value.value) if isinstance(value, Literal) else 0


class DegreeCounts(VersionedTransport):
    """Degree counts of a graph (mixed into ``GraphOperations``). A store that owns its
    data keeps capped counts per version of it: the same names are ranked again and
    again (a question's spans, then a draft's names; at scale, hundreds of numbered
    copies of one name tie)."""

    capabilities: Capabilities

    def degree(self, entity: str | NamedNode, *, at_most: int | None = None) -> int:
        """Number of relation triples (either direction) that touch ``entity``; with
        ``at_most``, counted up to it (a hub's count then costs the cap)."""
        common = {"entity": to_iri(entity), **self._common_bindings()}
        if at_most is None:
            return _count(self._select("degree", **common))
        return _count(self._select("degree_capped", cap=max(1, at_most), **common))

    def degrees(
        self, entities: Sequence[NamedNode], *, at_most: int | None = None, window: bool = True
    ) -> dict[NamedNode, int]:
        """``degree`` of many entities: one query per ``DEGREE_BATCH``. With ``at_most``,
        a store in this process reads at most ``DEGREES_WINDOW`` edges of a batch at
        once, and only when a hub fills that window counts each entity up to the cap
        (one cheap query each; at once without ``window``, for a caller that knows the
        window would fill); an endpoint, where a query is a round trip, counts a batch
        at once."""
        found: dict[NamedNode, int] = dict.fromkeys(entities, 0)
        unique = list(found)
        common = self._common_bindings()
        cap = None if at_most is None else max(1, at_most)  # as ``degree``
        keep = cap is not None and self.capabilities.in_process and self.versions_every_change
        version = 0
        if keep:
            self.refresh()  # first: a reader moves to a load another process swapped in
            version = self.version  # what is counted from here is of this version
            known = self._kept_degrees(version, unique, cap or 1)
            found.update(known)
            unique = [e for e in unique if e not in known]
        for start in range(0, len(unique), DEGREE_BATCH):
            batch = unique[start : start + DEGREE_BATCH]
            if cap is not None and self.capabilities.in_process:
                if window:
                    counted = self._capped_batch(batch, cap)
                else:
                    counted = {e: self.degree(e, at_most=cap) for e in batch}
                found.update(counted)
                if keep:
                    self._keep_degrees(version, counted, cap)
                continue
            for row in self._select("degrees", entities=batch, **common):
                node, count = row.get("e"), row.get("n")
                if isinstance(node, NamedNode) and isinstance(count, Literal):
                    found[node] = int(count.value)
        return found

    def _kept_degrees(
        self, version: int, entities: list[NamedNode], cap: int
    ) -> dict[NamedNode, int]:
        """The capped counts kept for ``entities`` at ``version``."""
        with _DEGREES_LOCK:
            at, kept = _DEGREES.get(self, (version, OrderedDict()))
            if at != version:
                return {}
            found = {}
            for entity in entities:
                key = (cap, entity.value)
                if key in kept:
                    kept.move_to_end(key)
                    found[entity] = kept[key]
            return found

    def _keep_degrees(self, version: int, counts: dict[NamedNode, int], cap: int) -> None:
        """Keep ``counts``, read at ``version``, unless a load moved the version while
        they were read (they may mix two versions' data)."""
        with _DEGREES_LOCK:
            if self.version != version:
                return
            at, kept = _DEGREES.get(self, (version, OrderedDict()))
            if at != version:
                at, kept = version, OrderedDict()
            for entity, count in counts.items():
                kept[(cap, entity.value)] = count
            while len(kept) > DEGREES_KEPT:
                kept.popitem(last=False)
            _DEGREES[self] = (at, kept)

    def _capped_batch(self, batch: list[NamedNode], at_most: int) -> dict[NamedNode, int]:
        """Each entity's degree up to ``at_most``, from one window of the batch's edges
        when they fit in it. When a hub fills it, an entity with ``at_most`` edges in
        the window is known to have them, and each other one is counted up to the cap
        on its own (reading the window again would cost more than those counts)."""
        common = self._common_bindings()
        # entities under the cap have fewer edges each: n of them fill n x cap only with
        # one at the cap among them, so a small batch reads less than DEGREES_WINDOW; at
        # least a hub's window each, or a small cap would fill it at once
        window = min(DEGREES_WINDOW, max(at_most, SORT_WINDOW) * len(batch))
        rows = self._select("degrees_window", entities=batch, window=window, **common)
        counts = {
            node: int(count.value)
            for row in rows
            if isinstance(node := row.get("e"), NamedNode)
            and isinstance(count := row.get("n"), Literal)
        }
        if sum(counts.values()) < window:  # every edge of the batch was read
            return {entity: min(counts.get(entity, 0), at_most) for entity in batch}
        return {
            entity: at_most
            if counts.get(entity, 0) >= at_most
            else self.degree(entity, at_most=at_most)
            for entity in batch
        }

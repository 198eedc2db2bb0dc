"""Paths between two nodes, read from the end whose edges fit a window.

A search of 2 or 3 hops reads a window of edges around where it starts, so its cost is
set by the window, not by a hub's degree; in a store in this process it starts from
the end whose edges fit (counted first, up to one past the window), and its rows are
sorted here (``kg/ordered_rows.py``): Oxigraph's own sort of 2,115 paths between two
hubs at ×100 took 0.30 s, against 0.11 s to find them. A question's key
entities are paired with one another, so one node's edges are counted for every pair
it is in: a store whose every change moves its version keeps those counts per version
(``KEPT_COUNTS``, least recently used out). At 100 copies of FB15k-237 a hub's count
reads 20,001 edges, about 25 ms.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

from pyoxigraph import Literal, NamedNode

from middleware.errors import BadRequest
from middleware.kg.base import MAX_LIMIT, SORT_WINDOW, Capabilities, Path, checked_limit, turned
from middleware.kg.ordered_rows import Ordering
from middleware.kg.result_rows import path_of_row, path_order
from middleware.kg.terms import to_iri
from middleware.kg.transport_stubs import VersionedTransport

PATHS_WINDOW = 20_000  # edges a path search reads around its start
PATHS_WALKS = 200_000  # 2-step walks a 3-hop path search reads from its start
# how the rows of paths_N are ordered (``-x``: descending), sorted here where they can be
PATH_ORDER = {
    1: ("-d1", "p1"),
    2: ("m1", "-d1", "p1", "-d2", "p2"),
    3: ("m1", "m2", "-d1", "p1", "-d2", "p2", "-d3", "p3"),
}
KEPT_COUNTS = 20_000  # nodes whose edge counts a graph keeps per version
_COUNTS: weakref.WeakKeyDictionary[object, OrderedDict[tuple[int, str], int]] = (
    weakref.WeakKeyDictionary()
)
_COUNTS_LOCK = threading.Lock()


class PathSearch(VersionedTransport):
    """``paths`` over the ``paths_N`` templates; mixed into ``GraphOperations``."""

    name: str
    capabilities: Capabilities
    paths_limit: int
    default_max_hops: int

    def paths(
        self,
        a: str | NamedNode,
        b: str | NamedNode,
        *,
        max_hops: int | None = None,
        limit: int | None = None,
    ) -> list[Path]:
        """The simple paths of at most ``max_hops`` (1-3) between ``a`` and ``b``.

        Edges are followed in either direction and each hop records which way it was
        walked. Shorter paths come first, in the order of the ``paths_N`` templates read
        from ``a``; at most ``limit`` paths are returned. A search of 2 or 3 hops reads at
        most ``PATHS_WINDOW`` edges around its start (and ``PATHS_WALKS`` 2-step walks for
        3 hops), and finds every path when they fit; in a store in this process it
        starts from ``b`` when only ``b`` fits, and between two larger hubs it reads a
        sample of ``SORT_WINDOW`` edges.
        """
        start, end = to_iri(a), to_iri(b)
        hops = self.default_max_hops if max_hops is None else max_hops
        if not isinstance(hops, int) or not 1 <= hops <= 3:
            raise BadRequest(f"max_hops must be 1, 2 or 3, got {hops!r}")
        limit = checked_limit(self.paths_limit if limit is None else limit, "paths")
        if start == end:
            return []
        found: list[Path] = []
        here, there, window = start, end, PATHS_WINDOW  # longer: from the smaller end
        for length in range(1, hops + 1):
            wanted = limit - len(found)
            if wanted <= 0:
                break
            if length == 2:
                here, there, window = self._search_start(start, end)
            # from the far end, all are read, to be cut in this end's order
            cut = wanted if here == start else MAX_LIMIT
            rows = self._select(
                f"paths_{length}",
                Ordering(PATH_ORDER[length], cut),
                a=here,
                b=there,
                limit=cut,  # a profile's own template may still order and cut them
                window=window,
                walks_window=PATHS_WALKS,
                **self._common_bindings(),
            )
            paths = [path_of_row(row, here, there, length, self.name) for row in rows]
            if here != start:
                paths = sorted((turned(p) for p in paths), key=path_order)[:wanted]
            found.extend(paths)
        return found

    def _search_start(self, a: NamedNode, b: NamedNode) -> tuple[NamedNode, NamedNode, int]:
        """Where a path search of 2 or 3 hops starts, where it ends, and how many edges
        it reads around its start. In a store in this process: from ``a`` unless ``a``
        has more than ``PATHS_WINDOW`` edges (as the search reads them) and ``b`` not;
        between two such hubs, a sample of ``SORT_WINDOW`` edges, as for neighbours and
        walks. Elsewhere (a count is a round trip): from ``a``."""
        if not self.capabilities.in_process:
            return a, b, PATHS_WINDOW
        if self._path_edges(a) <= PATHS_WINDOW:
            return a, b, PATHS_WINDOW
        if self._path_edges(b) <= PATHS_WINDOW:
            return b, a, PATHS_WINDOW
        return a, b, SORT_WINDOW

    def _path_edges(self, node: NamedNode) -> int:
        """The edges a path search reads around ``node``, counted up to one past the
        window; kept per version where every change moves it."""
        self.refresh()  # first: a reader moves to a load another process swapped in
        key = (self.version, node.value)
        if self.versions_every_change:
            with _COUNTS_LOCK:
                kept = _COUNTS.get(self)
                if kept is not None and key in kept:
                    kept.move_to_end(key)
                    return kept[key]
        rows = self._select(
            "path_edges_capped", entity=node, cap=PATHS_WINDOW + 1, **self._common_bindings()
        )
        value = rows[0].get("n") if rows else None
        count = int(value.value) if isinstance(value, Literal) else 0
        if self.versions_every_change:
            with _COUNTS_LOCK:
                kept = _COUNTS.setdefault(self, OrderedDict())
                kept[key] = count
                if len(kept) > KEPT_COUNTS:
                    kept.popitem(last=False)
        return count

"""Where a local store's caller queries run: its executor pool, made on first use.

Every caller query on a ``LocalStore`` (``/sparql``, ``kgmw query``, ``kg_sparql``, the
MCP ``sparql`` tool, a library's ``store.query``) runs in an executor process with no
network: on-disk stores are opened by the executors themselves, in-memory ones through
a ``Snapshot``. The store's own templates (neighbours, paths) still run in-process.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pyoxigraph as ox

from middleware.errors import ConfigError
from middleware.kg.base import QueryResult
from middleware.kg.executors.limits import ExecutorLimits
from middleware.kg.executors.pool import QueryPool
from middleware.kg.executors.snapshot import Snapshot
from middleware.kg.executors.tasks import run_query

if TYPE_CHECKING:
    from middleware.kg.sparql_guard import QueryDataset


class Store(Protocol):
    """What of a local store the executors need: where it lives (None: in memory, then
    its content and the version of that), and its name."""

    path: Path | None
    name: str

    @property
    def oxigraph(self) -> ox.Store: ...

    def content_version(self) -> tuple[int, int]: ...


_live: weakref.WeakSet[CallerQueries] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """At exit, executors stop before any snapshot folder they read goes."""
    for queries in list(_live):
        queries.close()


class CallerQueries:
    """``store``'s executor pool under ``limits``; ``configure`` may change them before
    (or between) uses."""

    def __init__(self, store: Store, limits: ExecutorLimits | None = None) -> None:
        self.store = store
        self.limits = limits or ExecutorLimits()
        self._pool: QueryPool | None = None
        self._snapshot: Snapshot | None = None
        self._lock = threading.Lock()
        _live.add(self)

    def configure(self, limits: ExecutorLimits) -> None:
        """Use ``limits`` from now on (a running pool with others is closed)."""
        with self._lock:
            if limits == self.limits:
                return
            self.limits = limits
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def allow(self, services: tuple[str, ...]) -> None:
        """Let the executors reach ``services`` too (the operator's policy for a call;
        the pool restarts when it widens)."""
        missing = tuple(url for url in services if url not in self.limits.services)
        if missing:
            limits = self.limits
            self.configure(dataclasses.replace(limits, services=limits.services + missing))

    def pool(self) -> QueryPool:
        """The executors over the store as it is now (started on first use)."""
        store = self.store
        with self._lock:
            if self.limits.workers < 1:
                raise ConfigError(
                    "caller SPARQL runs only in query executors, and sparql_executors is 0",
                    hint="set sparql_executors to 1 or more",
                )
            folder = store.path
            if folder is None:  # in memory: the executors open a copy
                self._snapshot = self._snapshot or Snapshot()
                self._snapshot.update(store.oxigraph, store.content_version())
                folder = self._snapshot.folder
            if self._pool is None:
                self._pool = QueryPool(
                    _opener(type(store), str(folder), store.name),
                    name=store.name,
                    workers=self.limits.workers,
                    memory_mb=self.limits.memory_mb,
                    total_mb=self.limits.total_mb,
                    services=self.limits.services,
                )
            return self._pool

    def run(
        self,
        text: str,
        timeout: float,
        max_rows: int | None,
        dataset: QueryDataset | None,
        max_bytes: int | None = None,
    ) -> QueryResult:
        """``text`` (checked already) on the store, in an executor; its result at most
        ``max_rows`` rows of ``max_bytes``."""
        result = self.pool().run(
            run_query, text, (timeout, max_rows, dataset, max_bytes), timeout=timeout
        )
        assert isinstance(result, QueryResult)
        return result

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None
            if self._snapshot is not None:
                self._snapshot.close()
                self._snapshot = None


def _opener(kind: Callable[..., Any], folder: str, name: str) -> functools.partial[Any]:
    """How an executor opens the store folder (picklable: the class by reference)."""
    return functools.partial(kind, folder, name=name, profile="generic", read_only=True)

"""LocalStore: an embedded pyoxigraph store, in memory or on disk.

On disk, a store directory holds generations (``gen-000001``, ...) and a symlink
``current`` naming the live one. Loading copies the live generation (a RocksDB
checkpoint: hard links, no data copied), loads into the copy and swaps the
symlink atomically, so a failed or killed load leaves the store as it was.

>>> store = LocalStore(profile="metaqa")
>>> kb = "Titanic|directed_by|James Cameron\\nAvatar|directed_by|James Cameron\\n"
>>> report = store.load_text(kb, name="kb.txt")
>>> [store.labels([p.nodes[1]])[p.nodes[1]] for p in store.paths(
...     store.entity_iri("Titanic"), store.entity_iri("Avatar"))]
['James Cameron']
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pyoxigraph as ox
from pyoxigraph import Literal, NamedNode, Quad
from tqdm import tqdm

from middleware.errors import (
    BadRequest,
    ConfigError,
    LoadError,
    StoreBusy,
)
from middleware.kg.backends.engine_rows import read_result
from middleware.kg.backends.generations import (
    CURRENT,
    current_name,
    hold,
    new_generation_dir,
    release,
    remove_stale,
    swap,
)
from middleware.kg.backends.store_folder import (
    folder_kind,
    no_store,
    not_a_store,
    plain_is_read_only,
    profile_ref,
    read_meta,
    store_path,
)
from middleware.kg.base import Capabilities, LabelRow, QueryResult
from middleware.kg.engine_errors import engine_error
from middleware.kg.executors.caller_queries import CallerQueries
from middleware.kg.executors.limits import ExecutorLimits
from middleware.kg.kept_count import counted
from middleware.kg.load_guard import LoadCaps
from middleware.kg.loading import (
    LoadReport,
    QuadCounter,
    Source,
    detect_format,
    load_bar,
    read_quads,
)
from middleware.kg.operations import GraphOperations
from middleware.kg.profiles import Profile, load_profile
from middleware.kg.sparql_guard import QueryDataset, QueryPolicy
from middleware.support.locks import LockTimeout, file_lock


class LocalStore(GraphOperations):
    """A pyoxigraph store behind the graph operations.

    ``LocalStore()`` is in memory; ``LocalStore("dir")`` persists to disk;
    ``LocalStore(store=existing)`` wraps a user's open ``pyoxigraph.Store``.
    """

    capabilities = Capabilities(label_index=True, in_process=True, templates=True)

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        store: ox.Store | None = None,
        profile: str | Profile | None = None,
        name: str | None = None,
        read_only: bool = False,
        timeout: float = 30.0,
        progress: bool = False,
        wait: float = 60.0,
        caps: LoadCaps | None = None,
        executors: ExecutorLimits | None = None,
    ) -> None:
        self._held: int | None = None  # the reader's lock on its open generation
        self._refreshing = threading.Lock()
        self.path = store_path(path) if path is not None else None
        self.wait = wait  # seconds to wait for another writer to let go of the store
        self.caps = caps or LoadCaps()  # how far an input file may go (load_max_*)
        self.read_only = read_only
        self.progress = progress
        self.default_timeout = timeout
        self.plain = False  # a plain Oxigraph database (no generations): read-only
        stored = read_meta(self.path).get("profile") if self.path else None
        self.stored_profile = str(stored) if stored else None  # as its loads recorded it
        chosen = profile or self.stored_profile or "generic"
        self.profile = chosen if isinstance(chosen, Profile) else load_profile(chosen)
        self.profile_ref = profile_ref(chosen, self.profile)  # what a load records
        self.name = name or (self.path.name if self.path else "memory")
        if store is not None and self.path is not None:
            raise BadRequest("give either a store directory or an open store, not both")
        self._store = store if store is not None else self._open()
        self._wrapped, self.versions_every_change = store is not None, store is None
        self._opened = self._current_name()  # the generation a reader has open
        self._version = 0
        self.caller_queries: CallerQueries | None = CallerQueries(self, executors)
        super().__init__()

    @property
    def version(self) -> int:
        """Counts the loads through this object, so label indexes know to rebuild."""
        return self._version

    def content_version(self) -> tuple[int, int]:
        """Changes whenever the content may have (a wrapped store: also its size)."""
        return self._version, len(self._store) if self._wrapped else 0

    # -- opening ----------------------------------------------------------------------
    def _current_name(self) -> str | None:
        return current_name(self.path) if self.path is not None else None

    def refresh(self) -> bool:
        """A reader over a store folder moves to the newest generation when a load
        (another process) has swapped one in since; True when it did. Called before
        every query, so a running service serves a new load on its next request."""
        if self.path is None:
            return False
        name = self._current_name()
        if name is None or name == self._opened:
            return False
        with self._refreshing:  # threads of one service refresh one at a time
            if name == self._opened:
                return False
            held = hold(self.path / name)
            try:
                store = ox.Store.read_only(str(self.path / name))
            except (OSError, RuntimeError):
                release(held)
                return False  # mid-swap or removed already: keep what is open, retry later
            release(self._held)
            self._store, self._opened, self._held = store, name, held
        self._version += 1  # label indexes and caches rebuild
        return True

    def _generation(self) -> Path | None:
        assert self.path is not None
        link = self.path / CURRENT
        return self.path / os.readlink(link) if link.is_symlink() else None

    def _open(self) -> ox.Store:
        if self.path is None:
            return ox.Store()
        kind = folder_kind(self.path)
        if kind == "plain":
            self.plain = self.read_only = True
            return ox.Store.read_only(str(self.path))
        if kind == "other":
            raise not_a_store(self.path)
        generation = self._generation() if kind == "kgmw" else None
        if generation is None:
            if self.read_only:  # only a load creates a store
                raise no_store(self.path, kind)
            generation = new_generation_dir(self.path)
            ox.Store(str(generation)).flush()
            swap(self.path, generation, self.profile_ref)
        # Generations are only ever read once swapped in (loads write a new one), so
        # every handle is read-only: readers never race a read-write RocksDB.
        self._held = hold(generation)
        try:
            return ox.Store.read_only(str(generation))
        except OSError as err:
            raise ConfigError(f"cannot open store {generation}: {err}") from err

    def _write_lock(self) -> AbstractContextManager[None]:
        """One load at a time per store, across processes: a second waits up to
        ``wait`` seconds (a note on stderr), then StoreBusy."""
        assert self.path is not None

        def note() -> None:
            busy = f"{self.path} is being loaded by another process; waiting up to"
            print(f"kgmw: {busy} {self.wait:g} s (store_lock_wait)", file=sys.stderr)

        return file_lock(self.path / ".lock", timeout=self.wait, waiting=note)

    def index_folder(self) -> Path | None:
        """The live generation's folder (it never changes): its predicates, its labels."""
        self.refresh()
        opened = None if self.plain else self._opened
        return self.path / opened if self.path and opened else None

    # -- queries ----------------------------------------------------------------------
    def _execute(
        self,
        sparql: str,
        timeout: float,
        max_rows: int | None = None,
        dataset: QueryDataset | None = None,
    ) -> QueryResult:
        self.refresh()
        try:
            return self._evaluate(sparql, timeout, max_rows, dataset)
        except (SyntaxError, OSError, RuntimeError) as err:  # the query's fault, or ours
            raise engine_error(err, self.name) from err

    def _execute_caller(
        self,
        sparql: str,
        timeout: float,
        max_rows: int | None,
        dataset: QueryDataset | None,
        policy: QueryPolicy,
    ) -> QueryResult:
        """A caller's text runs in an executor without network, never here."""
        self.refresh()  # for this process's own templates
        assert self.caller_queries is not None
        self.caller_queries.allow(policy.services)
        limits = policy.limits
        return self.caller_queries.run(sparql, timeout, max_rows, dataset, limits.max_result_bytes)

    def engine_result(
        self, sparql: str, dataset: QueryDataset | None = None
    ) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        """``sparql``'s result as the engine gives it, lazily computed (for writers that
        serialize it natively): its errors surface while it is read, as the engine's own
        ``OSError``; a syntax error is a ``BadRequest`` at once."""
        self.refresh()
        try:
            return self._engine_query(sparql, dataset)
        except SyntaxError as err:
            raise BadRequest(f"not a valid SPARQL query: {err}") from err

    def _engine_query(
        self, sparql: str, dataset: QueryDataset | None
    ) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        if dataset:  # exactly what the request names: a part it leaves out is empty
            return self._store.query(
                sparql,
                default_graph=[NamedNode(g) for g in dataset.default_graphs],
                named_graphs=[NamedNode(g) for g in dataset.named_graphs],
            )
        return self._store.query(sparql)

    def _evaluate(
        self, sparql: str, timeout: float, max_rows: int | None, dataset: QueryDataset | None
    ) -> QueryResult:
        """Results are computed lazily: errors surface while iterating, caught above."""
        deadline, result = time.monotonic() + timeout, self._engine_query(sparql, dataset)
        return read_result(result, deadline=deadline, max_rows=max_rows, source=self.name)

    # -- loading ----------------------------------------------------------------------
    def entity_iri(self, name: str) -> str:
        """The IRI a delimited-file name maps to under this store's profile."""
        if self.profile.delimited is None:
            raise BadRequest(f"profile {self.profile.name!r} has no delimited mapping")
        return self.profile.delimited.entity(name)

    @property
    def oxigraph(self) -> ox.Store:
        """The live generation's pyoxigraph store, to read (kept steps, degrees miss writes)."""
        self.refresh()
        return self._store

    def __len__(self) -> int:
        folder = self.index_folder()  # first: it moves a reader to the live generation
        return counted(folder, lambda: len(self._store))  # kept per generation

    def close(self) -> None:
        """Release the on-disk store (RocksDB closes when its last handle goes) and stop
        the executors of caller queries."""
        if self.caller_queries is not None:
            self.caller_queries.close()
        self._store, self.read_only = ox.Store(), True
        release(self._held)
        self._held = None

    def __del__(self) -> None:
        release(self._held)

    def label_rows(self) -> Iterator[LabelRow]:
        """Every label and alias of the store, for an in-memory index."""
        self.refresh()
        groups = ((p, False) for p in self.profile.label_predicates)
        aliases = ((p, True) for p in self.profile.alias_predicates)
        for predicate, is_alias in (*groups, *aliases):
            for quad in self._store.quads_for_pattern(None, predicate, None):
                if isinstance(quad.subject, NamedNode) and isinstance(quad.object, Literal):
                    label = quad.object
                    yield LabelRow(quad.subject, label.value, is_alias, label.language)

    def load(
        self,
        files: Sequence[str | os.PathLike[str]],
        *,
        format: str | None = None,
        replace: bool = False,
    ) -> LoadReport:
        """Load files all-or-nothing: any error leaves the store as it was. With
        ``replace`` the files become the whole graph, else they are added to it."""
        if self.plain and self.path is not None:
            raise plain_is_read_only(self.path)
        if self.read_only:
            raise BadRequest(f"store {self.name!r} is open read-only")
        sources = [Source(Path(f), detect_format(Path(f), format), self.caps) for f in files]
        for source in sources:
            if not source.path.is_file():
                raise LoadError(str(source.path), None, "no such file")
        started = time.monotonic()
        before = len(self._store)
        if self.path:
            read = self._load_persistent(sources, replace)
        else:
            read = self._load_memory(sources, replace)
        self._version += 1
        return LoadReport(
            files=tuple(str(s.path) for s in sources),
            quads_read=read,
            quads_added=len(self._store) - (0 if replace else before),
            seconds=time.monotonic() - started,
        )

    def load_text(self, text: str, *, name: str, format: str | None = None) -> LoadReport:
        """Load RDF or delimited text given as a string (``name`` picks the format)."""
        with tempfile.TemporaryDirectory() as folder:
            target = Path(folder) / Path(name).name
            target.write_text(text, encoding="utf-8")
            return self.load([target], format=format)

    def _quads(self, sources: Iterable[Source], bar: tqdm[Any]) -> Iterator[Quad]:
        for source in sources:
            bar.set_description(source.path.name)
            count = 0
            for quad in read_quads(source, self.profile):
                yield quad
                count += 1
                if count == 10_000:
                    bar.update(count)
                    count = 0
            bar.update(count)

    def _load_memory(self, sources: list[Source], replace: bool) -> int:
        # Parse everything first, so a bad line anywhere leaves the store untouched.
        with load_bar(self.progress) as bar:
            quads = list(self._quads(sources, bar))
        if replace:
            self._store.clear()
        self._store.bulk_extend(quads)
        return len(quads)

    def _load_persistent(self, sources: list[Source], replace: bool) -> int:
        try:
            with self._write_lock():
                return self._load_locked(sources, replace)
        except LockTimeout as err:
            raise StoreBusy(
                f"store {self.path} was being loaded by another process for {self.wait:g} s",
                hint="wait for the other load to finish, or raise store_lock_wait",
            ) from err

    def _load_locked(self, sources: list[Source], replace: bool) -> int:
        assert self.path is not None
        live = self._generation()
        remove_stale(self.path, {live.name} if live else set())
        staging = new_generation_dir(self.path)
        target: ox.Store | None = None
        try:
            if live is not None and not replace:  # the live generation as it is now
                ox.Store.read_only(str(live)).backup(str(staging))
            target = ox.Store(str(staging))
            with load_bar(self.progress) as bar:
                counter = QuadCounter()
                target.bulk_extend(counter.count(self._quads(sources, bar)))
            target.flush()
            target = None  # closed before the generation is reopened read-only
        except BaseException:  # also Ctrl-C: drop the half-written generation, re-raise
            del target  # closed now, not when the error's traceback is freed
            shutil.rmtree(staging, ignore_errors=True)
            raise
        held = hold(staging)
        self._store = ox.Store.read_only(str(staging))
        release(self._held)
        self._opened, self._held = staging.name, held
        swap(self.path, staging, self.profile_ref)
        remove_stale(self.path, {staging.name, live.name} if live else {staging.name})
        return counter.total

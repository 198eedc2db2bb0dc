"""Caller queries on an on-disk store run in executor processes, one query at a time each.

An executor opens the store read-only, under an address-space cap
(``sparql_executor_memory``). A query that runs past its timeout gets its executor
killed; one that crashes the engine or runs out of memory ends its executor. Either
way only that request fails (with a timeout or a 4xx naming the cause) and a fresh
executor takes the place of the old one, so an unknown crasher, runaway memory or a
CPU-bound query cannot take the service down, and nothing in the service process
holds a lock while a query runs.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import select
import socket
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from middleware.errors import (
    BadRequest,
    ClientGone,
    ConfigError,
    EndpointTimeout,
    MiddlewareError,
    RateLimited,
)
from middleware.kg.sparql_guard import QueryDataset
from middleware.server.client_watch import closed, watch_close
from middleware.server.direct_reply import Delivery
from middleware.server.executor_outcomes import lost, rebuild
from middleware.server.executor_queue import TieredQueue, TrackRecord
from middleware.server.guard import PenaltyBox
from middleware.server.query_executor import serve

# A fork server: one single-threaded process that has imported the executor's modules
# once; each executor is forked from it (milliseconds, not the second a fresh
# interpreter takes), and never from the service's threaded process.
_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(
    [
        "middleware.kg.backends.local",
        "middleware.serialize.sparql_results",
        "middleware.server.query_executor",
    ]
)
START_TIMEOUT = 60.0  # seconds an executor may take to import and open the store
START_FAILURES = 3  # executors in a row that die before they are ready: stop trying
LONG_AFTER = 0.1  # seconds after which a query is long: it yields the CPU (nice 19)
WATCH_EVERY = 0.05
SENT_GRACE = 0.05  # seconds to wait for an executor's reply after its caller closed
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class PoolResult:
    """A query's result, already written in the format the request negotiated. When
    the executor sent the response itself (``written``), ``body`` is what it left
    unsent of the whole response and ``size`` the body's length."""

    body: bytes
    kind: str
    truncated: bool
    written: bool = False
    size: int = 0


class _Executor:
    def __init__(self, process: BaseProcess, conn: Connection, handles: socket.socket) -> None:
        self.process = process
        self.conn = conn
        self.handles = handles  # where a caller's connection is passed to the executor
        self._readable = (
            select.poll()
        )  # one poll object: Connection.poll builds a selector each call
        self._readable.register(conn.fileno(), select.POLLIN)
        self.started: float | None = None  # when its current query began
        self.long = False  # its query ran past LONG_AFTER and was given way
        self.stopped_for: MiddlewareError | None = None  # why the watch killed it

    def answered(self, timeout: float, caller: socket.socket | None = None) -> str:
        """ "reply" once the executor has written (a reply, or EOF), "timeout" after
        ``timeout`` seconds, "gone" as soon as the ``caller``'s connection closes."""
        deadline = time.monotonic() + timeout
        watched = caller is not None and watch_close(self._readable, caller)
        try:
            while True:
                left = max(0, int((deadline - time.monotonic()) * 1000))
                events = dict(self._readable.poll(left))
                if self.conn.fileno() in events:
                    return "reply"
                if watched and caller is not None and caller.fileno() in events:
                    if closed(caller, events[caller.fileno()]):
                        return "gone"
                    self._readable.unregister(caller)  # data, not a close: stop watching
                    watched = False
                if not events and time.monotonic() >= deadline:
                    return "timeout"
        finally:
            if watched and caller is not None:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self._readable.unregister(caller)

    def rss(self) -> int:
        """Resident bytes, 0 when unknown."""
        try:
            with open(f"/proc/{self.process.pid}/statm", encoding="ascii") as statm:
                return int(statm.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            return 0

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        with contextlib.suppress(OSError):  # closed already by a concurrent replacement
            self.conn.close()
        self.handles.close()


class QueryPool:
    """``workers`` executor processes over the store at ``path``."""

    def __init__(
        self,
        path: Path,
        *,
        profile: str,
        workers: int = 2,
        memory_mb: int = 1024,
        total_mb: int = 0,
        penalties: PenaltyBox | None = None,
    ) -> None:
        self.path = path
        self.profile = profile
        self.workers = workers
        self.memory_mb = memory_mb
        self.total_mb = total_mb  # resident memory of all executors together; 0: no cap
        self.penalties = penalties or PenaltyBox(0.0)  # for callers whose query was stopped
        self.replaced = 0  # executors killed or lost and started again
        self._idle: TieredQueue[_Executor] = TieredQueue(newcomer_limit=max(1, workers - 1))
        self.record = TrackRecord()  # callers with quick queries go first when all are busy
        self._all: list[_Executor] = []
        self._lock = threading.Lock()
        self._closed = False
        self._failed_starts = 0
        self.broken: str | None = None  # why executors cannot start, once they cannot
        for _ in range(workers):
            self._start()
        threading.Thread(target=self._watch, daemon=True, name="kgmw-query-watch").start()

    def run(
        self,
        text: str,
        *,
        fmt: str,
        timeout: float,
        max_rows: int | None,
        dataset: QueryDataset | None = None,
        client: str = "",
        caller: socket.socket | None = None,
        delivery: Delivery | None = None,
    ) -> PoolResult:
        """Run checked query ``text`` for ``client`` in an idle executor, waiting at most
        ``timeout`` seconds for one to be free and ``timeout`` more for the result. When
        the ``caller``'s connection closes meanwhile, the query is stopped (ClientGone).
        With a ``delivery``, a result is sent by the executor on its connection."""
        self.penalties.check(client)
        if caller is not None and closed(caller, 0):
            raise ClientGone("the caller closed its connection before its query ran")
        tier = self.record.tier(client)
        executor = self._take(timeout + START_TIMEOUT, tier)
        try:
            job = (text, fmt, timeout, max_rows, dataset)
            return self._run_on(executor, job, client, caller, delivery)
        finally:
            self._idle.done(tier)

    def _run_on(
        self,
        executor: _Executor,
        job: tuple[str, str, float, int | None, QueryDataset | None],
        client: str,
        caller: socket.socket | None,
        delivery: Delivery | None,
    ) -> PoolResult:
        timeout = job[2]
        executor.started, executor.long, executor.stopped_for = time.monotonic(), False, None
        try:
            if delivery is None:
                executor.conn.send((*job, None))
            else:  # the connection first: the executor takes it as soon as it has the job
                socket.send_fds(executor.handles, [b"c"], [delivery.sock.fileno()])
                executor.conn.send((*job, (delivery.head, delivery.cut)))
            outcome = executor.answered(timeout + 1.0, caller)
            if outcome == "gone" and delivery is not None:  # left once it had its answer?
                outcome = "reply" if executor.answered(SENT_GRACE) == "reply" else "gone"
            if outcome == "gone" and not executor.long:
                # a short query: let it finish (stopping it costs more than it does)
                left = timeout + 1.0 - (time.monotonic() - (executor.started or 0.0))
                outcome = executor.answered(max(0.0, left))
                if outcome == "reply":
                    executor.conn.recv()
                    executor.started = None
                    self._idle.put(executor)
                    raise ClientGone("the caller closed its connection before the answer")
            if outcome == "gone":  # a long query nobody waits for: stop it, as a strike
                self._replace(executor)
                self.record.slow(client)
                self.penalties.strike(client)
                raise ClientGone("the caller closed its connection; its query was stopped")
            if outcome == "timeout":
                self._replace(executor)
                self.record.slow(client)
                self.penalties.punish(client)
                raise EndpointTimeout(
                    f"the query ran past its {timeout:g} s timeout; its executor was stopped",
                    hint="narrow the query, or raise --timeout",
                )
            message = executor.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            reason = executor.stopped_for
            code = self._replace(executor)
            self.record.slow(client)
            self.penalties.punish(client)
            raise (reason or lost(code, self.memory_mb)) from None
        executor.started = None
        if executor.long:  # it gave way with nice 19, which cannot be undone: retire it
            self.record.slow(client)
            self._replace(executor)
        else:
            self.record.quick(client)
            self._idle.put(executor)
        status, *rest = message
        if status == "ok":
            body, kind, truncated = rest
            return PoolResult(body, kind, truncated)
        if status == "sent":
            kind, truncated, size, unsent = rest
            return PoolResult(unsent, kind, truncated, written=True, size=size)
        raise rebuild(*rest)

    def _watch(self) -> None:
        """Every WATCH_EVERY s: long queries yield the CPU to short ones (nice 19);
        beyond workers - 1 long queries at once the newest is stopped, so one executor
        stays free for short ones; past ``total_mb`` resident the largest is stopped."""
        while not self._closed:
            time.sleep(WATCH_EVERY)
            with self._lock:
                executors = list(self._all)
            now = time.monotonic()
            busy = [e for e in executors if e.started is not None and e.stopped_for is None]
            for executor in busy:
                if not executor.long and now - (executor.started or now) > LONG_AFTER:
                    executor.long = True
                    with contextlib.suppress(OSError, TypeError):
                        os.setpriority(os.PRIO_PROCESS, executor.process.pid or 0, 19)
            longs = sorted((e for e in busy if e.long), key=lambda e: e.started or now)
            while len(longs) > max(1, self.workers - 1):
                self._stop(
                    longs.pop(),
                    RateLimited(
                        f"the service already runs {len(longs)} long queries, as many as "
                        "it allows at once",
                        retry_after=10,
                        hint="retry later, or raise sparql_executors",
                    ),
                )
            if self.total_mb and busy:
                sizes = {id(e): e.rss() for e in executors}
                if sum(sizes.values()) > self.total_mb << 20:
                    largest = max(busy, key=lambda e: sizes[id(e)])
                    self._stop(
                        largest,
                        BadRequest(
                            f"the query needed more memory than the executors' shared "
                            f"{self.total_mb} MB allow",
                            hint="narrow the query, or raise sparql_executors_memory_total",
                        ),
                    )

    def _stop(self, executor: _Executor, reason: MiddlewareError) -> None:
        executor.stopped_for = reason
        with contextlib.suppress(OSError):
            executor.process.kill()

    def _take(self, wait: float, tier: int) -> _Executor:
        executor = self._idle.get(tier, wait, give_up=lambda: self.broken is not None)
        if self.broken is not None:
            if executor is not None:
                self._idle.put(executor)
                self._idle.done(tier)
            raise ConfigError(
                f"the /sparql query executors cannot start: {self.broken}",
                hint="raise sparql_executor_memory, or set sparql_executors to 0",
            )
        if executor is None:
            share = (
                f"the {self._idle.newcomer_limit} executor(s) open to new callers"
                if tier > 0 and self._idle.newcomer_limit
                else f"all {self.workers} query executors"
            )
            raise EndpointTimeout(
                f"{share} stayed busy for {wait:g} s",
                hint="retry later, or raise sparql_executors",
            )
        return executor

    def close(self) -> None:
        self._closed = True
        with self._lock:
            executors, self._all = self._all, []
        for executor in executors:
            executor.stop()

    def running_short(self) -> int:
        """Queries running that have not run long (yet), for tests and status."""
        with self._lock:
            return sum(e.started is not None and not e.long for e in self._all)

    def pids(self) -> list[int]:
        """Process ids of the live executors (for tests and status)."""
        with self._lock:
            return [e.process.pid for e in self._all if e.process.pid is not None]

    def _start(self) -> None:
        ours, theirs = _CONTEXT.Pipe()
        handles, their_handles = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        process = _CONTEXT.Process(
            target=serve,
            args=(theirs, their_handles, str(self.path), self.profile, self.memory_mb, os.getpid()),
            daemon=True,
            name="kgmw-query-executor",
        )
        process.start()
        theirs.close()
        their_handles.close()
        executor = _Executor(process, ours, handles)
        with self._lock:
            self._all.append(executor)
        threading.Thread(target=self._await_ready, args=(executor,), daemon=True).start()

    def _await_ready(self, executor: _Executor) -> None:
        try:
            ready = executor.conn.poll(START_TIMEOUT) and executor.conn.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if self._closed:
            return
        if ready:
            self._failed_starts = 0
            self._idle.put(executor)
            return
        self._failed_starts += 1
        if self._failed_starts >= START_FAILURES:
            executor.stop()
            self.broken = (
                f"{START_FAILURES} executors in a row exited (code {executor.process.exitcode}) "
                f"before they had opened {self.path} under a {self.memory_mb} MB cap"
            )
            return
        self._replace(executor)

    def _replace(self, executor: _Executor) -> int | None:
        executor.stop()
        with self._lock:
            if executor in self._all:
                self._all.remove(executor)
            self.replaced += 1
        if not self._closed:
            self._start()
        return executor.process.exitcode

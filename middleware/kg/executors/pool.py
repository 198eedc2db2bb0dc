"""Caller queries run in executor processes, one query at a time each.

An executor (``process.py``) has no network (a namespace of its own), opens the store
read-only and runs under an address-space cap (``sparql_executor_memory``). A query
that runs past its timeout gets its executor killed; one that crashes the engine or
runs out of memory ends its executor. Either way only that query fails (with a timeout
or a 4xx naming the cause) and a fresh executor takes the place of the old one, so an
unknown crasher, runaway memory or a CPU-bound query cannot take its caller's process
down, and nothing in that process holds a lock while a query runs.

Who is served first when every executor is busy (``queue.py``), and what counts
against a caller (``Penalties``): a query stopped for the service's own capacity
never does.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from middleware.errors import (
    BadRequest,
    ClientGone,
    ConfigError,
    EndpointTimeout,
    MiddlewareError,
    RateLimited,
)
from middleware.kg.executors.client_watch import closed
from middleware.kg.executors.delivery import Delivery
from middleware.kg.executors.handle import ExecutorHandle
from middleware.kg.executors.outcomes import NoPenalties, Penalties, lost, no_room, rebuild
from middleware.kg.executors.outlets import Forwarder, plan_relays, targets_of
from middleware.kg.executors.process import ExecutorSpec, serve
from middleware.kg.executors.queue import TieredQueue, TrackRecord
from middleware.kg.executors.spawning import CONTEXT, ExecutorProcess
from middleware.kg.remote_guard import refuse_service_words

START_TIMEOUT = 60.0  # seconds an executor may take to import and open the store
START_FAILURES = 3  # executors in a row that die before they are ready: stop trying
STOP_GRACE = 1.0  # seconds past its timeout a query gets (its own error first), then is killed
LONG_AFTER = 0.1  # seconds after which a query is long: it yields the CPU (nice 19)
WATCH_EVERY = 0.05
SENT_GRACE = 0.05  # seconds to wait for an executor's reply after its caller closed
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Sent:
    """The executor sent the response itself: ``unsent`` is what its write left of the
    whole response, ``size`` the body's length."""

    kind: str
    truncated: bool
    size: int
    unsent: bytes


Task = Callable[..., Any]  # a module-level function(store, text, *args), run in an executor


class QueryPool:
    """``workers`` executor processes over the store ``open_store`` opens (a picklable
    callable, run in each executor), reaching out only to ``services`` (the allowlist).
    ``isolate=False`` is for tests of a machine without namespaces."""

    def __init__(
        self,
        open_store: Callable[[], Any],
        *,
        name: str = "store",
        workers: int = 2,
        memory_mb: int = 1024,
        total_mb: int = 0,
        services: Sequence[str] = (),
        isolate: bool = True,
    ) -> None:
        self.name = name
        self.workers = max(1, workers)
        self.memory_mb = memory_mb
        self.total_mb = total_mb  # resident memory of all executors together; 0: no cap
        self.replaced = 0  # executors killed or lost and started again
        targets = targets_of(services)
        self.forwarder = Forwarder(targets) if targets else None
        relays = plan_relays(targets, self.forwarder.path) if self.forwarder else None
        self._spec = ExecutorSpec(open_store, memory_mb, os.getpid(), relays, name, isolate)
        self.isolation: str | None = None  # the mechanism the executors report
        self.unisolated: str | None = None  # why an executor could not be isolated
        # callers whose queries ran long hold at most workers - 1 executors at once
        self._idle: TieredQueue[ExecutorHandle] = TieredQueue(
            limited_tier=2, limit=max(1, self.workers - 1)
        )
        self.record = TrackRecord()  # who goes first when every executor is busy
        self._no_room_until: dict[str, float] = {}  # each caller's last capacity Retry-After
        self._all: list[ExecutorHandle] = []
        self._lock = threading.Lock()
        self._closed = False
        self._failed_starts = 0
        self._ready = threading.Event()  # the first executor said how it is isolated
        self.broken: str | None = None  # why executors cannot start, once they cannot
        self._spare: ExecutorHandle | None = None  # started and ready, for the next replacement
        for _ in range(self.workers):
            self._start()
        self._start(spare=True)
        threading.Thread(target=self._watch, daemon=True, name="kgmw-query-watch").start()

    def wait_ready(self, timeout: float = START_TIMEOUT) -> str | None:
        """The isolation mechanism once the first executor is up (None: none)."""
        self._ready.wait(timeout)
        return self.isolation

    def run(
        self,
        task: Task,
        text: str,
        args: tuple[Any, ...] = (),
        *,
        timeout: float,
        client: str = "",
        caller: socket.socket | None = None,
        delivery: Delivery | None = None,
        penalties: Penalties | None = None,
    ) -> Any:
        """``task(store, text, *args)`` in an idle executor, for ``client``, waiting at most
        ``timeout`` seconds for one to be free and ``timeout`` more for the result. When
        the ``caller``'s connection closes meanwhile, the query is stopped (ClientGone).
        With a ``delivery``, a ``Written`` result is sent by the executor (``Sent``)."""
        penalties = penalties or NoPenalties()
        penalties.check(client)
        if caller is not None and closed(caller, 0):
            raise ClientGone("the caller closed its connection before its query ran")
        tier = self.record.tier(client)
        executor = self._take(timeout, tier, client)
        try:
            if executor.isolation is None:  # no namespace here: SERVICE is refused by text
                try:
                    refuse_service_words(text, why=self.unisolated or "")
                except BadRequest:
                    self._idle.put(executor)
                    raise
            job = (task, text, args, timeout)
            executor.tier = tier
            return self._run_on(executor, job, client, caller, delivery, penalties)
        finally:
            self._idle.done(tier, client)

    def _run_on(
        self,
        executor: ExecutorHandle,
        job: tuple[Task, str, tuple[Any, ...], float],
        client: str,
        caller: socket.socket | None,
        delivery: Delivery | None,
        penalties: Penalties,
    ) -> Any:
        timeout = job[3]
        with executor.lock:  # a new job: the watch's view of the last one no longer holds
            executor.job += 1
            executor.started, executor.long, executor.stopped_for = time.monotonic(), False, None
        executor.timeout = timeout
        try:
            if delivery is None:
                executor.conn.send((*job, None))
            else:  # the connection first: the executor takes it as soon as it has the job
                socket.send_fds(executor.handles, [b"c"], [delivery.sock.fileno()])
                executor.conn.send((*job, (delivery.head, delivery.cut)))
            outcome = executor.answered(timeout + STOP_GRACE, caller)
            if outcome == "gone" and delivery is not None:  # left once it had its answer?
                outcome = "reply" if executor.answered(SENT_GRACE) == "reply" else "gone"
            if outcome == "gone" and not executor.long:
                # a short query: let it finish (stopping it costs more than it does)
                left = timeout + STOP_GRACE - (time.monotonic() - (executor.started or 0.0))
                outcome = executor.answered(max(0.0, left))
                if outcome == "reply":
                    executor.conn.recv()
                    with executor.lock:
                        executor.started = None
                    self._idle.put(executor)
                    raise ClientGone("the caller closed its connection before the answer")
            if outcome == "gone":  # a long query nobody waits for: stop it, as a strike
                self._replace(executor)
                self.record.slow(client)
                penalties.strike(client)
                raise ClientGone("the caller closed its connection; its query was stopped")
            if outcome == "timeout":
                self._replace(executor)
                self.record.slow(client)
                penalties.punish(client)
                raise EndpointTimeout(
                    f"the query ran past its {timeout:g} s timeout; its executor was stopped",
                    hint="narrow the query, or raise the timeout setting (--timeout, KGMW_TIMEOUT)",
                )
            message = executor.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            reason = executor.stopped_for
            code = self._replace(executor)
            if not isinstance(reason, RateLimited):
                self.record.slow(client)
                penalties.punish(client)
            elif self._ignored_retry_after(client, reason):  # a refusal for capacity is
                penalties.strike(client)  # no fault; coming back at once, again and again, is
            raise (reason or lost(code, self.memory_mb, timeout)) from None
        with executor.lock:
            executor.started = None
            stopped = executor.stopped_for
        if stopped is not None:  # the watch killed it just as it answered: replace it
            self._replace(executor)
        elif executor.long:  # it gave way with nice 19, which cannot be undone: retire it
            self.record.slow(client)
            self._replace(executor)
        else:
            self.record.quick(client)
            self._idle.put(executor)
        status, *rest = message
        if status == "ok":
            return rest[0]
        if status == "sent":
            kind, truncated, size, unsent = rest
            return Sent(kind, truncated, size, unsent)
        raise rebuild(*rest)

    def _watch(self) -> None:
        """Every WATCH_EVERY s: long queries yield the CPU to short ones (nice 19);
        beyond workers - 1 long queries at once one is stopped, so one executor
        stays free for short ones (a refusal for capacity: no fault of its caller, told
        when a place frees); past ``total_mb`` resident the largest is stopped."""
        while not self._closed:
            time.sleep(WATCH_EVERY)
            with self._lock:
                executors = list(self._all)
            now = time.monotonic()
            busy = [e for e in executors if e.started is not None and e.stopped_for is None]
            jobs = {id(e): e.job for e in busy}  # what each was running when looked at
            for executor in busy:
                if not executor.long and now - (executor.started or now) > LONG_AFTER:
                    executor.long = True
                    with contextlib.suppress(OSError, TypeError):
                        os.setpriority(os.PRIO_PROCESS, executor.process.pid or 0, 19)
            # the one stopped: the worst tier's (a runaway's before an innocent caller's
            # slow query), of those the newest
            longs = sorted((e for e in busy if e.long), key=lambda e: (e.tier, e.started or now))
            while len(longs) > max(1, self.workers - 1):
                victim = longs.pop()
                ends = [(e.started or now) + e.timeout + STOP_GRACE - now for e in longs]
                free_in = min(ends) + 0.5 if ends else 1.0  # when the first is stopped for sure
                self._stop(victim, jobs[id(victim)], no_room(len(longs), free_in))
            if self.total_mb and busy:
                sizes = {id(e): e.rss() for e in executors}
                if sum(sizes.values()) > self.total_mb << 20:
                    largest = max(busy, key=lambda e: sizes[id(e)])
                    self._stop(
                        largest,
                        jobs[id(largest)],
                        BadRequest(
                            f"the query needed more memory than the executors' shared "
                            f"{self.total_mb} MB allow",
                            hint="narrow the query, or raise sparql_executors_memory_total",
                        ),
                    )

    def _ignored_retry_after(self, client: str, refusal: RateLimited) -> bool:
        """Whether ``client`` was refused for capacity before and came back with another
        long query before that refusal's ``Retry-After`` was up; this refusal's time is
        remembered either way (the least recent callers are forgotten)."""
        if not client:
            return False
        now = time.monotonic()
        with self._lock:
            early = now < self._no_room_until.get(client, 0.0)
            self._no_room_until[client] = now + (refusal.retry_after or 1)
            if len(self._no_room_until) > 10_000:
                self._no_room_until = {c: t for c, t in self._no_room_until.items() if t > now}
        return early

    def _stop(self, executor: ExecutorHandle, job: int, reason: MiddlewareError) -> None:
        """Kill ``executor`` for ``reason`` if it still runs ``job``: one that finished
        meanwhile, or took the next caller's query, is left alone."""
        with executor.lock:
            if executor.job != job or executor.started is None or executor.stopped_for:
                return
            executor.stopped_for = reason
            with contextlib.suppress(OSError):
                executor.process.kill()

    def _take(self, wait: float, tier: int, client: str) -> ExecutorHandle:
        """An idle executor within ``wait`` seconds (more while the first still starts)."""
        if not self._ready.is_set():
            wait += START_TIMEOUT
        executor = self._idle.get(
            tier, wait, give_up=lambda: self.broken is not None, caller=client
        )
        if self.broken is not None:
            if executor is not None:
                self._idle.put(executor)
                self._idle.done(tier, client)
            raise ConfigError(
                f"the query executors cannot start: {self.broken}",
                hint="raise sparql_executor_memory",
            )
        if executor is None:
            raise EndpointTimeout(
                f"all {self.workers} query executors stayed busy for {wait:g} s",
                hint="retry later, or raise sparql_executors",
            )
        return executor

    def close(self) -> None:
        self._closed = True
        with self._lock:
            executors, self._all = self._all, []
        for executor in executors:
            executor.stop()
        if self.forwarder is not None:
            self.forwarder.close()

    def running_short(self) -> int:
        """Queries running that have not run long (yet), for tests and status."""
        with self._lock:
            return sum(e.started is not None and not e.long for e in self._all)

    def pids(self) -> list[int]:
        """Process ids of the live executors (for tests and status)."""
        with self._lock:
            return [e.process.pid for e in self._all if e.process.pid is not None]

    def _start(self, *, spare: bool = False) -> None:
        """One more executor; a ``spare`` waits, ready, to take the place of the next one
        stopped, so a replacement costs no start (about 0.2 s) at the moment it is needed."""
        ours, theirs = CONTEXT.Pipe()
        handles, their_handles = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        process = ExecutorProcess(
            target=serve,
            args=(theirs, their_handles, self._spec),
            daemon=True,
            name="kgmw-query-executor",
        )
        process.start()
        theirs.close()
        their_handles.close()
        executor = ExecutorHandle(process, ours, handles)
        with self._lock:
            self._all.append(executor)
        threading.Thread(target=self._await_ready, args=(executor, spare), daemon=True).start()

    def _await_ready(self, executor: ExecutorHandle, spare: bool) -> None:
        try:
            said = executor.conn.recv() if executor.conn.poll(START_TIMEOUT) else None
        except (EOFError, OSError):
            said = None
        if self._closed:
            return
        if isinstance(said, tuple) and said[0] == "ready":
            executor.isolation = said[1]
            self.isolation, self.unisolated = said[1], said[2] or None
            self._ready.set()
            self._failed_starts = 0
            with self._lock:
                kept = spare and self._spare is None
                if kept:
                    self._spare = executor
            if not kept:
                self._idle.put(executor)
            return
        self._failed_starts += 1
        if isinstance(said, tuple) and said[0] == "failed":  # it could not open the store
            executor.stop()
            self.broken = f"an executor could not open {self.name}: {said[1]}"
            self._ready.set()
            return
        if self._failed_starts >= START_FAILURES:
            executor.stop()
            self.broken = (
                f"{START_FAILURES} executors in a row exited (code {executor.process.exitcode}) "
                f"before they had opened {self.name} under a {self.memory_mb} MB cap"
            )
            self._ready.set()
            return
        self._replace(executor)

    def _replace(self, executor: ExecutorHandle) -> int | None:
        executor.stop()
        with self._lock:
            if executor in self._all:
                self._all.remove(executor)
            self.replaced += 1
            spare, self._spare = self._spare, None
        if not self._closed:
            if spare is not None:
                self._idle.put(spare)  # ready now; a new spare starts behind it
            self._start(spare=spare is not None)
        return executor.process.exitcode

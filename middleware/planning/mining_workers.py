"""Mining many questions at once, each within its budget, in workers that can be stopped.

Over a store on disk, each worker is a process of its own: forked from the executors'
fork server, cut off the network, with the store opened read-only. A question whose
mining runs ``GRACE`` seconds past its budget of seconds gets its worker killed (a
query that never yields a row included) and a fresh worker takes its place. Over any
other source (an endpoint, a store in memory) the questions run in threads, at most
``workers`` requests in flight, each bounded by the source's own query timeout.

Outcomes come back as they finish; ``MinedQuestion.index`` says whose they are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_for_replies
from typing import Any

from pyoxigraph import NamedNode

from middleware.errors import EndpointError, EndpointTimeout, QueryRejected
from middleware.kg.base import KnowledgeGraph
from middleware.kg.executors.process import isolate_quietly
from middleware.kg.executors.spawning import CONTEXT, ExecutorProcess
from middleware.planning.mining import MinedPath, bounded, mine
from middleware.planning.path_search import CAP, SearchBudget, SearchBudgetSpent, edges

GRACE = 5.0  # seconds past a question's budget before its worker is killed
START_TIMEOUT = 60.0  # seconds a worker may take to open the store


@dataclass(frozen=True)
class MiningLimits:
    """What one question's mining may do."""

    max_hops: int = 3
    cap: int = CAP
    queries: int = 500
    seconds: float = 30.0
    grace: float = GRACE  # seconds past ``seconds`` before a worker process is killed


@dataclass(frozen=True)
class MiningJob:
    """One question to mine: its topics and gold answers (IRIs); ``check_topics`` drops
    topics without an edge first (a dataset's id the graph does not hold)."""

    index: int
    topics: tuple[str, ...]
    golds: tuple[str, ...]
    check_topics: bool = False


@dataclass(frozen=True)
class MinedQuestion:
    """What mining one question came to. ``kind``: ``mined`` (``paths`` may be empty),
    ``no_topic``, ``over_budget``, ``refused`` or ``failed`` (the source failed: the run
    stops); ``message`` says why for all but ``mined``."""

    index: int
    kind: str
    paths: list[MinedPath] = field(default_factory=list)
    topics: tuple[str, ...] = ()
    message: str = ""


def mine_question(graph: KnowledgeGraph, job: MiningJob, limits: MiningLimits) -> MinedQuestion:
    """Mine one question on ``graph`` within ``limits``; every way it can end is an outcome."""
    budget = SearchBudget(queries=limits.queries, seconds=limits.seconds)
    topics = [NamedNode(t) for t in job.topics]
    try:
        if job.check_topics and bounded(graph):
            topics = [t for t in topics if edges(graph, t, cap=1, budget=budget)]
            if not topics:
                return MinedQuestion(job.index, "no_topic")
        golds = [NamedNode(g) for g in job.golds]
        paths = mine(graph, topics, golds, max_hops=limits.max_hops, cap=limits.cap, budget=budget)
    except SearchBudgetSpent as err:
        return MinedQuestion(job.index, "over_budget", message=f"over budget: {err.message}")
    except EndpointTimeout as err:
        why = f"a query ran past its timeout: {err.message}"
        return MinedQuestion(job.index, "over_budget", message=why)
    except QueryRejected as err:
        return MinedQuestion(job.index, "refused", message=f"a query was refused: {err.message}")
    except EndpointError as err:
        return MinedQuestion(job.index, "failed", message=err.message)
    return MinedQuestion(job.index, "mined", paths, tuple(t.value for t in topics))


def mine_all(
    graph: KnowledgeGraph,
    jobs: Iterable[MiningJob],
    limits: MiningLimits,
    *,
    workers: int = 1,
    opener: Callable[[], KnowledgeGraph] | None = None,
) -> Iterator[MinedQuestion]:
    """Mine ``jobs``, ``workers`` at a time: in killable processes over ``opener``'s
    store where there is one, else in threads on ``graph``; outcomes as they finish."""
    if opener is not None:
        with ProcessMiners(opener, limits, workers) as miners:
            yield from miners.mine(jobs)
        return
    if workers <= 1:
        for job in jobs:
            yield mine_question(graph, job, limits)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kgmw-mine") as pool:
        pending: set[Future[MinedQuestion]] = set()
        for job in jobs:
            if len(pending) >= workers:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                yield from (f.result() for f in done)
            pending.add(pool.submit(mine_question, graph, job, limits))
        for future in pending:
            yield future.result()


def _serve(conn: Connection, opener: Callable[[], KnowledgeGraph], limits: MiningLimits) -> None:
    """A worker's life: off the network, open the store, mine each job it is sent."""
    isolate_quietly(None)
    graph = opener()
    conn.send("ready")
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        conn.send(mine_question(graph, job, limits))


@dataclass
class _Worker:
    process: Any
    conn: Connection
    job: MiningJob | None = None
    started: float = 0.0


class ProcessMiners:
    """``workers`` mining processes over one store; a job past its budget kills its worker."""

    def __init__(
        self, opener: Callable[[], KnowledgeGraph], limits: MiningLimits, workers: int
    ) -> None:
        self.opener, self.limits = opener, limits
        self.killed = 0  # workers stopped for running past a budget
        self.workers = [self._start() for _ in range(max(1, workers))]

    def __enter__(self) -> ProcessMiners:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _start(self) -> _Worker:
        parent, child = CONTEXT.Pipe()
        process = ExecutorProcess(
            target=_serve, args=(child, self.opener, self.limits), daemon=True
        )
        process.start()
        child.close()
        if not parent.poll(START_TIMEOUT) or parent.recv() != "ready":
            process.kill()
            raise EndpointError(
                "a mining worker could not open the store",
                hint="check that the store folder is readable; run with --workers 1 to "
                "mine in this process",
            )
        return _Worker(process, parent)

    def mine(self, jobs: Iterable[MiningJob]) -> Iterator[MinedQuestion]:
        """Each job's outcome, as it finishes."""
        queue = iter(jobs)
        left = True
        deadline = self.limits.seconds + self.limits.grace
        while True:
            for worker in self.workers:
                if worker.job is None and left:
                    job = next(queue, None)
                    if job is None:
                        left = False
                        break
                    worker.job, worker.started = job, time.monotonic()
                    worker.conn.send(job)
            busy = [w for w in self.workers if w.job is not None]
            if not busy:
                return
            now = time.monotonic()
            first_due = min(w.started + deadline for w in busy)
            ready = wait_for_replies([w.conn for w in busy], timeout=max(0.0, first_due - now))
            for worker in busy:
                if worker.conn in ready:
                    try:
                        outcome = worker.conn.recv()
                    except EOFError:  # the worker died (the engine crashed, memory ran out)
                        yield self._replace(worker, "its mining worker ended unexpectedly")
                        continue
                    worker.job = None
                    yield outcome
                elif time.monotonic() >= worker.started + deadline:
                    self.killed += 1
                    yield self._replace(
                        worker,
                        f"over budget: mining ran past its {self.limits.seconds:g} s; "
                        "its worker process was stopped",
                    )

    def _replace(self, worker: _Worker, why: str) -> MinedQuestion:
        assert worker.job is not None
        outcome = MinedQuestion(worker.job.index, "over_budget", message=why)
        worker.process.kill()
        worker.process.join(5)
        worker.conn.close()
        fresh = self._start()
        worker.process, worker.conn, worker.job = fresh.process, fresh.conn, None
        return outcome

    def close(self) -> None:
        for worker in self.workers:
            worker.conn.close()
            worker.process.kill()
            worker.process.join(5)

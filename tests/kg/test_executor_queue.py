"""The executor queue serves regulars, then newcomers, then callers whose queries ran long;
the last hold at most a set number of executors."""

from __future__ import annotations

import threading
import time

from middleware.errors import RateLimited
from middleware.kg.executors.pool import QueryPool
from middleware.kg.executors.queue import TieredQueue, TrackRecord
from tests.waiting import PATIENCE, until


class Arrivals:
    """Waiters on a queue whose clock the test sets: each arrives at a set time and is
    waiting before the next comes, and items are handed out one at a time, so the order
    served depends on the queue alone, not on how fast threads start."""

    def __init__(self, limited_tier: int = 1, limit: int | None = None) -> None:
        self.now = 0.0
        self.free: TieredQueue[str] = TieredQueue(limited_tier, limit, clock=lambda: self.now)
        self.served: list[str] = []
        self.threads: list[threading.Thread] = []

    def waiting(self) -> int:
        with self.free._ready:
            return len(self.free._waiting)

    def arrive(self, caller: str, tier: int, at: float) -> None:
        self.now = at
        before = self.waiting()

        def wait() -> None:
            item = self.free.get(tier, timeout=PATIENCE, caller=caller)
            self.served.append(f"{caller}:{item}")

        thread = threading.Thread(target=wait)
        thread.start()
        self.threads.append(thread)
        assert until(lambda: self.waiting() > before)  # it is waiting

    def hand_out(self, *items: str) -> None:
        for item in items:
            got = len(self.served)
            self.free.put(item)
            assert until(lambda n=got: len(self.served) > n)  # one waiter took it

    def join(self) -> None:
        for thread in self.threads:
            thread.join(PATIENCE)


def test_a_trusted_waiter_goes_ahead_of_newcomers_that_came_first() -> None:
    queue = Arrivals()
    for n in range(3):
        queue.arrive(f"new{n}", 1, at=0.05 * n)
    queue.arrive("regular", 0, at=0.15)  # within a newcomer's quarter second
    queue.hand_out("a", "b", "c", "d")
    queue.join()
    assert [s.split(":")[0] for s in queue.served] == ["regular", "new0", "new1", "new2"]


def test_a_waiter_gives_up_after_its_timeout_or_when_told() -> None:
    free: TieredQueue[str] = TieredQueue()
    began = time.monotonic()
    assert free.get(0, timeout=0.2) is None
    # at least its timeout; the upper bound (50 times it) only catches a wait that
    # ignores its timeout, however busy the machine
    assert 0.15 < time.monotonic() - began < 10
    assert free.get(0, timeout=30, give_up=lambda: True) is None
    free.put("x")
    assert free.get(1, timeout=1) == "x" and free.qsize() == 0


def test_a_slow_query_puts_its_caller_behind_the_newcomers_for_a_while() -> None:
    now = [0.0]
    record = TrackRecord(trusted_after=3, memory=60.0, clock=lambda: now[0])
    for _ in range(3):
        record.quick("key:1")
    assert record.tier("key:1") == 0
    record.slow("key:1")
    assert record.tier("key:1") == 2 and record.tier("key:2") == 1
    now[0] = 61.0  # forgotten after a while: a newcomer again
    assert record.tier("key:1") == 1
    record.slow("key:1")
    record.quick("key:1")  # a quick query clears it at once
    assert record.tier("key:1") == 1


def test_callers_of_long_queries_leave_executors_for_everyone_else() -> None:
    free: TieredQueue[str] = TieredQueue(limited_tier=2, limit=1)
    free.put("a")
    free.put("b")
    assert free.get(2, timeout=1) is not None  # a caller of long queries takes one
    assert free.get(2, timeout=0.2) is None  # a second waits, though one is free
    assert free.get(1, timeout=1) is not None  # a newcomer takes it
    free.put("a")
    free.done(2)  # the first is through
    assert free.get(2, timeout=1) == "a"


def test_a_newcomer_is_not_held_back_by_other_newcomers() -> None:
    free: TieredQueue[str] = TieredQueue(limited_tier=2, limit=1)
    free.put("a")
    free.put("b")
    assert free.get(1, timeout=1) is not None
    assert free.get(1, timeout=1) is not None  # newcomers are not limited


def test_a_caller_with_a_query_running_waits_behind_one_without() -> None:
    """One key floods with quick queries in parallel: it is a regular (tier 0), yet a
    newcomer with nothing running is served before its next one."""
    queue = Arrivals(limited_tier=2, limit=1)
    queue.free.put("a")
    assert queue.free.get(0, timeout=1, caller="key:flood") == "a"  # the flood holds one
    queue.arrive("key:flood", 0, at=0.0)
    queue.arrive("key:new", 1, at=0.05)
    queue.hand_out("b")
    assert queue.served == ["key:new:b"]
    queue.free.done(0, "key:flood")  # the flood's first query is through: its second goes
    queue.hand_out("a")
    queue.join()
    assert queue.served == ["key:new:b", "key:flood:a"]


def test_regulars_that_keep_coming_hold_a_newcomer_back_a_quarter_second_at_most() -> None:
    """Six regulars each sending quick queries back to back used to keep a newcomer
    waiting out its whole timeout: a tier was a strict order. Now it is a head start."""
    queue = Arrivals(limited_tier=2, limit=1)
    queue.arrive("key:new", 1, at=0.0)
    queue.arrive("key:early-regular", 0, at=0.2)  # within the newcomer's quarter second
    queue.arrive("key:late-regular", 0, at=0.3)  # past it
    queue.hand_out("a", "b", "c")
    queue.join()
    assert [s.split(":")[1] for s in queue.served] == ["early-regular", "new", "late-regular"]


class _Process:
    def __init__(self) -> None:
        self.killed = 0

    def kill(self) -> None:
        self.killed += 1


class _Handle:
    """What ``QueryPool._stop`` reads of an executor."""

    def __init__(self, job: int, running: bool) -> None:
        self.lock = threading.Lock()
        self.job = job
        self.started: float | None = 1.0 if running else None
        self.stopped_for: object = None
        self.process = _Process()


def test_the_watch_stops_only_the_job_it_looked_at() -> None:
    """The watch decides on what it saw; by the time it acts, the executor may have
    finished that query or taken the next caller's: that one is not stopped (it used to
    be, and its caller got "crashed its executor" and a penalty)."""
    reason = RateLimited("no room", retry_after=1)
    moved_on = _Handle(job=8, running=True)
    QueryPool._stop(None, moved_on, 7, reason)  # type: ignore[arg-type]
    finished = _Handle(job=7, running=False)
    QueryPool._stop(None, finished, 7, reason)  # type: ignore[arg-type]
    assert moved_on.process.killed == finished.process.killed == 0
    still = _Handle(job=7, running=True)
    QueryPool._stop(None, still, 7, reason)  # type: ignore[arg-type]
    assert still.process.killed == 1 and still.stopped_for is reason


class _Pool:
    """What ``QueryPool._ignored_retry_after`` reads of a pool."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._no_room_until: dict[str, float] = {}


def test_coming_back_before_a_capacity_retry_after_is_what_counts() -> None:
    """The first refusal for capacity is no fault; another long query sent before that
    refusal's Retry-After is up is a strike (so runaways that ignore it are boxed)."""
    pool = _Pool()
    refusal = RateLimited("no room", retry_after=60)
    assert not QueryPool._ignored_retry_after(pool, "key:a", refusal)  # type: ignore[arg-type]
    assert QueryPool._ignored_retry_after(pool, "key:a", refusal)  # type: ignore[arg-type]
    assert not QueryPool._ignored_retry_after(pool, "key:b", refusal)  # type: ignore[arg-type]
    soon = RateLimited("no room", retry_after=0.01)
    assert not QueryPool._ignored_retry_after(pool, "key:c", soon)  # type: ignore[arg-type]
    time.sleep(0.05)  # it waited as asked
    assert not QueryPool._ignored_retry_after(pool, "key:c", soon)  # type: ignore[arg-type]
    assert not QueryPool._ignored_retry_after(pool, "", refusal)  # type: ignore[arg-type]

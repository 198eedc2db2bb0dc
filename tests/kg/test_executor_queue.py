"""The executor queue serves regulars, then newcomers, then callers whose queries ran long;
the last hold at most a set number of executors."""

from __future__ import annotations

import threading
import time

from middleware.errors import RateLimited
from middleware.kg.executors.pool import QueryPool
from middleware.kg.executors.queue import TieredQueue, TrackRecord


def test_a_trusted_waiter_goes_ahead_of_newcomers_that_came_first() -> None:
    free: TieredQueue[str] = TieredQueue()
    served: list[str] = []

    def wait(name: str, tier: int) -> None:
        item = free.get(tier, timeout=10)
        served.append(f"{name}:{item}")

    newcomers = [threading.Thread(target=wait, args=(f"new{n}", 1)) for n in range(3)]
    for thread in newcomers:
        thread.start()
        time.sleep(0.05)
    regular = threading.Thread(target=wait, args=("regular", 0))
    regular.start()
    time.sleep(0.05)
    for item in ("a", "b", "c", "d"):
        free.put(item)
        time.sleep(0.05)
    for thread in [*newcomers, regular]:
        thread.join(5)
    assert [s.split(":")[0] for s in served] == ["regular", "new0", "new1", "new2"]


def test_a_waiter_gives_up_after_its_timeout_or_when_told() -> None:
    free: TieredQueue[str] = TieredQueue()
    began = time.monotonic()
    assert free.get(0, timeout=0.2) is None
    assert 0.15 < time.monotonic() - began < 2
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
    free: TieredQueue[str] = TieredQueue(limited_tier=2, limit=1)
    free.put("a")
    assert free.get(0, timeout=1, caller="key:flood") == "a"  # the flood holds one
    served: list[str] = []

    def wait(caller: str, tier: int) -> None:
        item = free.get(tier, timeout=10, caller=caller)
        served.append(f"{caller}:{item}")

    flood = threading.Thread(target=wait, args=("key:flood", 0))
    flood.start()
    time.sleep(0.05)
    newcomer = threading.Thread(target=wait, args=("key:new", 1))
    newcomer.start()
    time.sleep(0.05)
    free.put("b")
    newcomer.join(5)
    assert served == ["key:new:b"]
    free.done(0, "key:flood")  # the flood's first query is through: its second goes
    free.put("a")
    flood.join(5)
    assert served == ["key:new:b", "key:flood:a"]


def test_regulars_that_keep_coming_hold_a_newcomer_back_a_quarter_second_at_most() -> None:
    """Six regulars each sending quick queries back to back used to keep a newcomer
    waiting out its whole timeout: a tier was a strict order. Now it is a head start."""
    now = [0.0]
    free: TieredQueue[str] = TieredQueue(limited_tier=2, limit=1, clock=lambda: now[0])
    served: list[str] = []

    def wait(caller: str, tier: int) -> None:
        served.append(f"{caller}:{free.get(tier, timeout=10, caller=caller)}")

    def arrive(caller: str, tier: int, at: float) -> threading.Thread:
        now[0] = at
        thread = threading.Thread(target=wait, args=(caller, tier))
        thread.start()
        time.sleep(0.05)  # it is waiting
        return thread

    threads = [
        arrive("key:new", 1, 0.0),
        arrive("key:early-regular", 0, 0.2),  # within the newcomer's quarter second
        arrive("key:late-regular", 0, 0.3),  # past it
    ]
    for item in ("a", "b", "c"):
        free.put(item)
        time.sleep(0.05)
    for thread in threads:
        thread.join(5)
    assert [s.split(":")[1] for s in served] == ["early-regular", "new", "late-regular"]


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

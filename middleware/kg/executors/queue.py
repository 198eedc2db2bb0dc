"""Who gets the next free query executor: callers with a record of quick queries first.

When every executor is busy, requests wait. First come, first served would let a burst
of callers with runaway queries hold up everyone else for as long as it takes to stop
each runaway in turn, and one caller with many queries in flight take every executor
in turn. Instead there are three tiers, served in order:

- 0, regulars: the caller's last ``trusted_after`` queries all finished quickly;
- 1, newcomers: nothing known about the caller;
- 2, callers whose query ran long or was stopped in the last ``memory`` seconds.

A caller with a query running asks for more as a newcomer at best; within a tier,
callers holding fewer executors go first, then the first to ask. Tier 2 may hold at
most ``limit`` executors at once, so runaways never hold them all: a new caller's
short query finds one free behind any number of other callers' runaways, and behind
any number of one caller's queries in flight.

>>> record = TrackRecord(trusted_after=2)
>>> record.quick("addr:10.0.0.1"); record.quick("addr:10.0.0.1")
>>> record.tier("addr:10.0.0.1"), record.tier("addr:10.0.0.2")
(0, 1)
>>> record.slow("addr:10.0.0.1"); record.tier("addr:10.0.0.1")
2
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

Item = TypeVar("Item")
_REMEMBERED = 10_000  # callers whose record is kept (the least recent are forgotten)


class TrackRecord:
    """Quick queries in a row per caller (tier 0 after ``trusted_after`` of them), and
    when each caller's last query ran long (tier 2 for ``memory`` seconds after)."""

    def __init__(
        self,
        trusted_after: int = 1,
        memory: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.trusted_after = trusted_after
        self.memory = memory
        self._clock = clock
        self._quick: OrderedDict[str, int] = OrderedDict()
        self._slow: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def tier(self, caller: str) -> int:
        with self._lock:
            if self._quick.get(caller, 0) >= self.trusted_after:
                return 0
            since = self._slow.get(caller)
            return 2 if since is not None and self._clock() - since < self.memory else 1

    def quick(self, caller: str) -> None:
        with self._lock:
            self._quick[caller] = self._quick.pop(caller, 0) + 1
            self._slow.pop(caller, None)
            if len(self._quick) > _REMEMBERED:
                self._quick.popitem(last=False)

    def slow(self, caller: str) -> None:
        """A query of ``caller`` ran long or was stopped: tier 2 for a while."""
        with self._lock:
            self._quick.pop(caller, None)
            self._slow.pop(caller, None)
            self._slow[caller] = self._clock()
            if len(self._slow) > _REMEMBERED:
                self._slow.popitem(last=False)


class TieredQueue(Generic[Item]):
    """Items handed to waiters by tier, then by how many items the waiter's caller
    holds now, then by arrival; a caller that holds one already asks for more as a
    newcomer at best (so a regular flooding with queries in parallel gets one executor
    first, not all of them). Waiters of ``limited_tier`` and above hold at most
    ``limit`` items at once. Each item got is given back with ``done``."""

    def __init__(self, limited_tier: int = 1, limit: int | None = None) -> None:
        self.limited_tier = limited_tier
        self.limit = limit
        self._limited_holding = 0
        self._holding: Counter[str] = Counter()  # items each caller holds now
        self._items: list[Item] = []
        self._waiting: list[tuple[int, int, str]] = []  # (tier, ticket, caller)
        self._tickets = itertools.count()
        self._ready = threading.Condition()

    def put(self, item: Item) -> None:
        with self._ready:
            self._items.append(item)
            self._ready.notify_all()

    def get(
        self,
        tier: int,
        timeout: float,
        give_up: Callable[[], bool] = lambda: False,
        caller: str = "",
    ) -> Item | None:
        """An item once this waiter leads (see the class); None after ``timeout``
        seconds, or as soon as ``give_up()`` (asked twice a second)."""
        deadline = time.monotonic() + timeout
        with self._ready:
            ticket = (tier, next(self._tickets), caller)
            self._waiting.append(ticket)
            try:
                while not (self._items and self._leader() == ticket):
                    left = deadline - time.monotonic()
                    if left <= 0 or give_up():
                        return None
                    self._ready.wait(min(left, 0.5))
                if tier >= self.limited_tier:
                    self._limited_holding += 1
                self._holding[caller] += 1
                return self._items.pop()
            finally:
                self._waiting.remove(ticket)
                self._ready.notify_all()  # the next in line may now lead

    def done(self, tier: int, caller: str = "") -> None:
        """A waiter of ``tier`` for ``caller`` is through with the item it got (given back
        or not)."""
        with self._ready:
            if tier >= self.limited_tier:
                self._limited_holding -= 1
            self._holding[caller] -= 1
            if self._holding[caller] <= 0:
                del self._holding[caller]
            self._ready.notify_all()

    def _leader(self) -> tuple[int, int, str] | None:
        """The waiter served next, of those with room: by tier, a caller's further queries
        counted as a newcomer's at best while it has one running; then the fewest held
        by its caller; then the first."""
        able = [w for w in self._waiting if self._room(w[0])]
        if not able:
            return None

        def order(waiter: tuple[int, int, str]) -> tuple[int, int, int]:
            tier, ticket, caller = waiter
            held = self._holding.get(caller, 0)
            return (tier if held == 0 else max(tier, 1), held, ticket)

        return min(able, key=order)

    def _room(self, tier: int) -> bool:
        limit = self.limit
        return tier < self.limited_tier or limit is None or self._limited_holding < limit

    def qsize(self) -> int:
        with self._ready:
            return len(self._items)

"""Who gets the next free query executor: callers with a record of quick queries first.

When every executor is busy, requests wait. First come, first served would let a burst
of callers with runaway queries hold up everyone else for as long as it takes to stop
each runaway in turn, and one caller with many queries in flight take every executor
in turn. Instead there are three tiers:

- 0, regulars: the caller's last ``trusted_after`` queries all finished quickly;
- 1, newcomers: nothing known about the caller;
- 2, callers whose query ran long or was stopped in the last ``memory`` seconds.

A tier is a head start, not a strict order: a waiter counts as having come 0, 0.25 or
1 s later than it did, by its tier, and 0.25 s later again for each executor its
caller holds already (a caller with a query running asks for more as a newcomer at
best). So regulars go first, yet a newcomer waits behind those who came after it for
a quarter of a second at most, however many keep coming. Tier 2 may hold at most
``limit`` executors at once, so runaways never hold them all: a new caller's short
query finds one free behind any number of other callers' runaways.

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
TIER_DELAY = (0.0, 0.25, 1.0)  # seconds a waiter of each tier counts as having come later
HELD_DELAY = 0.25  # and again for each executor its caller already holds


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
    """Items handed to waiters by arrival, each waiter counted as later by its tier's
    delay and by a delay per item its caller holds now (a caller that holds one asks
    for more as a newcomer at best: a regular flooding with queries in parallel gets
    one executor first, not all of them). Waiters of ``limited_tier`` and above hold at
    most ``limit`` items at once. Each item got is given back with ``done``."""

    def __init__(
        self,
        limited_tier: int = 1,
        limit: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limited_tier = limited_tier
        self.limit = limit
        self._clock = clock
        self._limited_holding = 0
        self._holding: Counter[str] = Counter()  # items each caller holds now
        self._items: list[Item] = []
        self._waiting: list[tuple[int, int, str, float]] = []  # (tier, ticket, caller, when)
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
            ticket = (tier, next(self._tickets), caller, self._clock())
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

    def _leader(self) -> tuple[int, int, str, float] | None:
        """The waiter served next, of those with room: the earliest by arrival plus its
        tier's delay (a caller's further queries count as a newcomer's at best while it
        has one running) plus a delay for each item its caller holds. Delays, not strict
        tiers: a newcomer waits behind regulars who came after it for at most
        ``TIER_DELAY[1]`` seconds, however many regulars keep coming."""
        able = [w for w in self._waiting if self._room(w[0])]
        if not able:
            return None

        def order(waiter: tuple[int, int, str, float]) -> tuple[float, int]:
            tier, ticket, caller, when = waiter
            held = self._holding.get(caller, 0)
            effective = tier if held == 0 else max(tier, 1)
            return (when + TIER_DELAY[min(effective, 2)] + HELD_DELAY * held, ticket)

        return min(able, key=order)

    def _room(self, tier: int) -> bool:
        limit = self.limit
        return tier < self.limited_tier or limit is None or self._limited_holding < limit

    def qsize(self) -> int:
        with self._ready:
            return len(self._items)

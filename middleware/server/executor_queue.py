"""Who gets the next free query executor: callers with a record of quick queries first.

When every executor is busy, requests wait. First come, first served would let a burst
of new callers, each with one runaway query, hold up the regular ones for as long as it
takes to stop each runaway in turn. Instead a caller whose last ``trusted_after``
queries all finished quickly (tier 0) goes ahead of newcomers and of callers whose
query ran long (tier 1); within a tier, the first to ask is served first. Tier 1 may
hold at most ``newcomer_limit`` executors at once, so one stays for the regulars even
when they are between two requests.

>>> record = TrackRecord(trusted_after=2)
>>> record.quick("addr:10.0.0.1"); record.quick("addr:10.0.0.1")
>>> record.tier("addr:10.0.0.1"), record.tier("addr:10.0.0.2")
(0, 1)
>>> record.slow("addr:10.0.0.1"); record.tier("addr:10.0.0.1")
1
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

Item = TypeVar("Item")
_REMEMBERED = 10_000  # callers whose record is kept (the least recent are forgotten)


class TrackRecord:
    """Quick queries in a row per caller: tier 0 after ``trusted_after`` of them."""

    def __init__(self, trusted_after: int = 1) -> None:
        self.trusted_after = trusted_after
        self._quick: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def tier(self, caller: str) -> int:
        with self._lock:
            return 0 if self._quick.get(caller, 0) >= self.trusted_after else 1

    def quick(self, caller: str) -> None:
        with self._lock:
            self._quick[caller] = self._quick.pop(caller, 0) + 1
            if len(self._quick) > _REMEMBERED:
                self._quick.popitem(last=False)

    def slow(self, caller: str) -> None:
        """A query of ``caller`` ran long or was stopped: back to the newcomers' tier."""
        with self._lock:
            self._quick.pop(caller, None)


class TieredQueue(Generic[Item]):
    """Items handed to waiters by (tier, arrival): lower tiers first; waiters above tier 0
    hold at most ``newcomer_limit`` items at once (each given back with ``done``)."""

    def __init__(self, newcomer_limit: int | None = None) -> None:
        self.newcomer_limit = newcomer_limit
        self._newcomers_holding = 0
        self._items: list[Item] = []
        self._waiting: list[tuple[int, int]] = []  # a heap of (tier, ticket)
        self._tickets = itertools.count()
        self._ready = threading.Condition()

    def put(self, item: Item) -> None:
        with self._ready:
            self._items.append(item)
            self._ready.notify_all()

    def get(
        self, tier: int, timeout: float, give_up: Callable[[], bool] = lambda: False
    ) -> Item | None:
        """An item once this waiter leads its tier and nobody of a lower tier waits;
        None after ``timeout`` seconds, or as soon as ``give_up()`` (asked twice a second)."""
        deadline = time.monotonic() + timeout
        with self._ready:
            ticket = (tier, next(self._tickets))
            heapq.heappush(self._waiting, ticket)
            try:
                while not (self._items and self._waiting[0] == ticket and self._room(tier)):
                    left = deadline - time.monotonic()
                    if left <= 0 or give_up():
                        return None
                    self._ready.wait(min(left, 0.5))
                if tier > 0:
                    self._newcomers_holding += 1
                return self._items.pop()
            finally:
                self._waiting.remove(ticket)
                heapq.heapify(self._waiting)
                self._ready.notify_all()  # the next in line may now lead

    def done(self, tier: int) -> None:
        """A waiter of ``tier`` is through with the item it got (given back or not)."""
        if tier > 0:
            with self._ready:
                self._newcomers_holding -= 1
                self._ready.notify_all()

    def _room(self, tier: int) -> bool:
        limit = self.newcomer_limit
        return tier == 0 or limit is None or self._newcomers_holding < limit

    def qsize(self) -> int:
        with self._ready:
            return len(self._items)

"""A busy caller's requests taken from the shared rate limit a few at a time.

Counting every request in Redis costs a round trip each, about a tenth of a cheap
``/sparql`` request. A process that served a caller K times in the last second instead
takes up to K of its next requests from the shared count in one call (at most 8, and
at most one per 200 of the limit) and serves them from this lease for at most a
second. A limit under 200 a minute, or a caller seen at most once a second here, is
counted one request at a time: exact.

The cost of the lease, bounded: a caller may get up to 7 more requests per process at
the edge of a window (leased just before it, served just after), and requests leased
but not served within the second count as spent.

>>> now = [0.0]
>>> leases = Leases(per_minute=6000, clock=lambda: now[0])
>>> leases.take("key:a"), leases.size("key:a")  # seen once: one at a time
(False, 1)
>>> leases.take("key:a"), leases.take("key:a"), leases.size("key:a")
(False, False, 3)
>>> leases.hold("key:a", 2)  # a lease of 3: one served now, two held
>>> leases.take("key:a"), leases.take("key:a"), leases.take("key:a")
(True, True, False)
>>> now[0] = 2.5  # quiet for a second: the held ones are gone, one at a time again
>>> leases.take("key:a"), leases.size("key:a")
(False, 1)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

LEASE_MAX = 8  # requests taken in one call at most
LEASE_SECONDS = 1.0  # a leased request not served within this long is dropped
REQUESTS_PER_LEASED = 200  # a limit of L a minute leases at most L // 200 at once
_MAX_CALLERS = 10_000


@dataclass
class _Caller:
    second: int  # the whole second of the clock ``count`` is for
    count: int  # requests seen in that second
    previous: int  # requests seen in the second before
    held: int = 0  # leased requests not yet served
    until: float = 0.0  # when they are dropped


class Leases:
    """Leased requests and recent request counts per caller, in this process."""

    def __init__(
        self,
        per_minute: int,
        *,
        most: int = LEASE_MAX,
        seconds: float = LEASE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.most = max(1, min(most, per_minute // REQUESTS_PER_LEASED))
        self.seconds = seconds
        self._clock = clock
        self._callers: dict[str, _Caller] = {}
        self._lock = threading.Lock()

    def take(self, caller: str) -> bool:
        """Count one request of ``caller``; True when a leased request pays for it."""
        now = self._clock()
        second = int(now)
        with self._lock:
            seen = self._callers.get(caller)
            if seen is None:
                if len(self._callers) >= _MAX_CALLERS:
                    self._forget(now)
                seen = self._callers[caller] = _Caller(second, 0, 0)
            if seen.second != second:
                seen.previous = seen.count if seen.second == second - 1 else 0
                seen.second, seen.count = second, 0
            seen.count += 1
            if seen.held > 0 and now < seen.until:
                seen.held -= 1
                return True
            seen.held = 0
            return False

    def size(self, caller: str) -> int:
        """How many requests to take from the shared count for ``caller`` now."""
        with self._lock:
            seen = self._callers.get(caller)
            recent = max(seen.previous, seen.count) if seen is not None else 0
        return max(1, min(self.most, recent))

    def hold(self, caller: str, count: int) -> None:
        """Keep ``count`` requests leased for ``caller`` for ``seconds`` from now."""
        if count <= 0 or self.most <= 1:
            return
        with self._lock:
            seen = self._callers.get(caller)
            if seen is not None:
                seen.held, seen.until = count, self._clock() + self.seconds

    def _forget(self, now: float) -> None:
        """Drop callers not seen for a second (the lock is held)."""
        recent = int(now) - 1
        self._callers = {
            name: seen
            for name, seen in self._callers.items()
            if seen.second >= recent or (seen.held and now < seen.until)
        }

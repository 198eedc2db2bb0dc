"""A busy caller's requests taken from the shared rate limit a few at a time.

Counting every request in Redis costs a round trip each, about a tenth of a cheap
``/sparql`` request. A process that served a caller K times in the last second instead
takes up to K of its next requests from the shared count in one call (at most 8, and
at most one per 200 of the limit) and serves them from this lease for at most a
second. A limit under 200 a minute, or a caller seen at most once a second here, is
counted one request at a time: exact.

One lease per caller is asked for at a time in a process (``claim``); other threads
that find none held meanwhile count their own request alone, and what a lease brings
is added to what is held (``settle``), so threads never throw each other's away.

The cost of the lease, bounded: a caller may get up to 7 more requests per process at
the edge of a window (leased just before it, served just after), besides the requests
in flight at that moment (as with any shared count), and requests leased but not
served within the second count as spent.

>>> now = [0.0]
>>> leases = Leases(per_minute=6000, clock=lambda: now[0])
>>> leases.take("key:a"), leases.claim("key:a")  # seen once: one at a time
(False, 1)
>>> leases.take("key:a"), leases.take("key:a"), leases.claim("key:a")
(False, False, 3)
>>> leases.claim("key:a")  # another thread meanwhile: one lease asked for at a time
1
>>> leases.settle("key:a", 2)  # the lease of 3 came: one served now, two held
>>> leases.take("key:a"), leases.take("key:a"), leases.take("key:a")
(True, True, False)
>>> now[0] = 2.5  # quiet for a second: the held ones are gone, one at a time again
>>> leases.take("key:a"), leases.claim("key:a")
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
    claimed: bool = False  # a thread of this process is asking for a lease


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
        self._forgot = float("-inf")
        self._lock = threading.Lock()

    def take(self, caller: str) -> bool:
        """Count one request of ``caller``; True when a leased request pays for it."""
        now = self._clock()
        second = int(now)
        with self._lock:
            seen = self._callers.get(caller)
            if seen is None:
                if len(self._callers) >= _MAX_CALLERS and now - self._forgot >= 1.0:
                    self._forgot = now  # one pass a second however many new callers
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

    def claim(self, caller: str) -> int:
        """How many requests to take from the shared count for ``caller`` now; above 1,
        this thread asks for the lease and must ``settle`` it, win or lose."""
        with self._lock:
            seen = self._callers.get(caller)
            if seen is None or seen.claimed:
                return 1
            size = max(1, min(self.most, max(seen.previous, seen.count)))
            seen.claimed = size > 1
            return size

    def settle(self, caller: str, count: int) -> None:
        """The claimed lease brought ``count`` requests beyond this thread's own (0: it
        was refused or failed); they are held for ``seconds`` at most."""
        with self._lock:
            seen = self._callers.get(caller)
            if seen is None:
                return
            seen.claimed = False
            if count <= 0:
                return
            now = self._clock()
            if seen.held <= 0 or now >= seen.until:
                seen.held, seen.until = 0, now + self.seconds
            seen.held += count  # added to a held lease, its end kept: never later

    def _forget(self, now: float) -> None:
        """Drop callers not seen for a second (the lock is held)."""
        recent = int(now) - 1
        self._callers = {
            name: seen
            for name, seen in self._callers.items()
            if seen.second >= recent or (seen.held and now < seen.until)
        }

"""The ``/sparql`` penalty box and its strikes, shared through Redis by every host.

The gate at ``accept`` must stay free of network round trips, so the check stays local:
each process copies the refusals held in Redis into its own table (the address gate,
one per host) at least once a second. A refusal is written to Redis and to the local
table at once; strikes are counted in Redis. Redis's own clock times everything, so
hosts whose clocks differ still agree on when a refusal ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable

from middleware.errors import StateUnavailable
from middleware.server.shared.redis_state import SharedRedis

SYNC_SECONDS = 0.5  # how often a process copies Redis's refusals into its table
COPY_SLACK = 0.5  # a refusal ending no more than this later than copied is not copied again
log = logging.getLogger("middleware.server")

# KEYS[1]: the refusals (caller -> until); ARGV: caller, seconds. A longer refusal stays.
_REFUSE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local ends = now + tonumber(ARGV[2])
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not held or tonumber(held) < ends then
  redis.call('ZADD', KEYS[1], ends, ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return 1
"""

# KEYS[1]: the refusals. Every caller refused now, each followed by its seconds left.
_HELD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rows = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
local out = {}
for i = 1, #rows, 2 do
  out[#out + 1] = rows[i]
  out[#out + 1] = tostring(tonumber(rows[i + 1]) - now)
end
return out
"""

# KEYS[1]: one caller's strikes; ARGV: window seconds, a unique token. The strikes left.
_STRIKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], math.ceil(window * 1000))
return redis.call('ZCARD', KEYS[1])
"""


class SharedRefusals:
    """Refusals of callers held in Redis, copied by a thread of each process into the
    local table through ``apply(caller, seconds)``."""

    def __init__(
        self,
        shared: SharedRedis,
        apply: Callable[[str, float], None],
        *,
        every: float = SYNC_SECONDS,
    ) -> None:
        self.shared = shared
        self.apply = apply
        self.every = every
        self._key = shared.key("refused")
        self._refuse = shared.client.register_script(_REFUSE)
        self._held = shared.client.register_script(_HELD)
        self._strike = shared.client.register_script(_STRIKE)
        self._copied: dict[str, float] = {}  # caller: when its copied refusal ends (monotonic)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def refuse(self, caller: str, seconds: float) -> None:
        """Refuse ``caller`` for ``seconds`` on every host (the local table is the
        caller's job); an unreachable Redis is logged, the local refusal holds."""
        with contextlib.suppress(StateUnavailable):  # logged; this host still refuses
            self.shared.call(
                lambda: self._refuse(keys=[self._key], args=[caller, seconds]),
                what="the penalty box",
            )

    def strikes(self, caller: str, window: float) -> int | None:
        """``caller``'s strikes within ``window`` seconds, this one counted, across
        every host; None while Redis cannot be reached (count locally then)."""
        token = secrets.token_hex(8)
        try:
            found = self.shared.call(
                lambda: self._strike(
                    keys=[self.shared.key("strikes", caller)], args=[window, token]
                ),
                what="the penalty box",
            )
        except StateUnavailable:
            return None
        return int(found)

    def copy_once(self) -> int:
        """Copy the refusals held in Redis into the local table; how many were new or
        longer than this process last copied (the others are not applied again)."""
        rows = self.shared.call(lambda: self._held(keys=[self._key]), what="the penalty box")
        now = time.monotonic()
        applied, seen = 0, {}
        for name, text in zip(rows[::2], rows[1::2], strict=True):
            caller, ends = _text(name), now + float(_text(text))
            seen[caller] = max(ends, self._copied.get(caller, 0.0))
            if ends > self._copied.get(caller, 0.0) + COPY_SLACK:
                self.apply(caller, ends - now)
                applied += 1
        self._copied = seen  # refusals that ended in Redis are forgotten here too
        return applied

    def start(self) -> None:
        """The copying thread of this process (again after a fork: threads do not cross it)."""
        with self._lock:
            if self._pid == os.getpid() or self._stop.is_set():
                return
            self._pid = os.getpid()
        self._thread = threading.Thread(target=self._run, name="kgmw-refusals", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.copy_once()
            except StateUnavailable:
                continue  # the local table goes on alone until Redis is back

    def stop(self) -> None:
        """End the copying thread, waiting for a copy under way (its Redis call may not
        outlive the client it uses: the caller closes that next)."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=self.shared.timeout * 4 + 1)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value

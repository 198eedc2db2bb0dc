"""Who may call the service: bearer API keys, key grants, the ``/sparql`` penalty box.

>>> keys = ApiKeys.parse("k-one, k-two")
>>> keys.caller("Bearer k-two"), keys.enabled
('key:sha256:13c9b36b189b70dd', True)
"""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
import time
from collections.abc import Callable, Sequence

from middleware.config.key_grants import KeyGrant
from middleware.errors import Forbidden, RateLimited, Unauthorized
from middleware.server.connections.address_gate import AddressGate
from middleware.server.shared.refusals import SharedRefusals

ADDRESS_CALLER = "addr:"  # the caller id of a request without an API key: addr:IP
_TABLE_SIZE = 10_000  # callers a table holds before the ended ones are dropped
FAILED = "failed:"  # failed:addr:IP, an address refused for its failed authentications


def _split(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


class ApiKeys:
    """The accepted keys; a request names one as ``Authorization: Bearer KEY``. Keys in
    ``keys`` may use everything; each of ``grants`` only what its table lists."""

    def __init__(self, keys: list[str], grants: tuple[KeyGrant, ...] = ()) -> None:
        # Digests of equal length, compared in constant time, so timing tells nothing.
        self._digests = [hashlib.sha256(k.encode()).digest() for k in keys]
        self._digests += [grant.digest for grant in grants]
        # a key's own digest names it, not its place in the list: hosts sharing limits
        # and penalties through Redis may list their keys in any order
        self._ids = [f"key:sha256:{hashlib.sha256(k.encode()).hexdigest()[:16]}" for k in keys]
        self._ids += [f"key:{grant.name}" for grant in grants]
        self._grants = {f"key:{grant.name}": grant for grant in grants}

    @classmethod
    def parse(cls, setting: str | None, grants: tuple[KeyGrant, ...] = ()) -> ApiKeys:
        return cls(_split(setting), grants)

    @property
    def enabled(self) -> bool:
        return bool(self._digests)

    def grant(self, caller: str | None) -> KeyGrant | None:
        """What ``caller`` may use; None for a key that may use everything."""
        return self._grants.get(caller or "")

    def caller(self, authorization: str | None) -> str:
        """A stable caller id (``key:sha256:`` and 16 hex digits of the key's SHA-256,
        ``key:NAME`` for a ``[keys.NAME]`` key) for a valid header; Unauthorized otherwise."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized(
                "this service needs an API key",
                hint="send the header 'Authorization: Bearer YOUR_KEY'",
            )
        digest = hashlib.sha256(token.strip().encode()).digest()
        found = None
        for caller, known in zip(self._ids, self._digests, strict=True):
            if hmac.compare_digest(digest, known):
                found = caller
        if found is None:
            raise Unauthorized("the API key is not valid", hint="check the key you were given")
        return found


def permit(
    grant: KeyGrant | None, *, sources: Sequence[str] = (), method: str | None = None
) -> None:
    """Forbidden unless ``grant`` (None: a key that may use everything) covers every one
    of ``sources`` and ``method``."""
    if grant is None:
        return
    for source in sources:
        if grant.sources is not None and source not in grant.sources:
            raise Forbidden(
                f"this API key ({grant.name}) may not use source {source!r}",
                hint=f"its sources: {', '.join(grant.sources) or 'none'}",
            )
    if method is not None and grant.methods is not None and method not in grant.methods:
        raise Forbidden(
            f"this API key ({grant.name}) may not use method {method!r}",
            hint=f"its methods: {', '.join(grant.methods) or 'none'}",
        )


class PenaltyBox:
    """Callers refused for ``seconds`` after a query of theirs had to be stopped while it
    ran (timeout, memory, crash), or after more than three were refused for their shape
    (past a limit) within that time: checked before a request's body is read, so a
    flood of crafted queries costs little. A caller known only by its address
    (``addr:IP``) is also refused at the connection by ``gate``, before HTTP is parsed.

    With ``shared`` the strikes are counted and the refusals held in Redis for every
    host; the check stays local (the gate, fed from Redis within a second), and while
    Redis cannot be reached this process counts and refuses on its own."""

    def __init__(
        self,
        seconds: float,
        *,
        gate: AddressGate | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self.gate = gate
        self._clock = clock
        self._until: dict[str, float] = {}
        self._strikes: dict[str, list[float]] = {}
        self._tidied = float("-inf")
        self._lock = threading.Lock()
        self.shared: SharedRefusals | None = None

    def share(self, refusals: SharedRefusals) -> None:
        """Count strikes and hold refusals in Redis from now on (``refusals`` applies
        what other hosts refused through ``hold``)."""
        self.shared = refusals
        refusals.start()

    def check(self, caller: str) -> None:
        """Raise RateLimited while ``caller`` is in the box (this process's, or the
        gate's that all of gunicorn's workers share)."""
        wait = self._left(caller)
        if wait > 0:
            raise RateLimited(
                "a recent query from this caller went past a limit or had to be stopped "
                "(timeout, memory, crash); its queries are refused for a while",
                retry_after=math.ceil(wait),
                hint=f"retry after {math.ceil(wait)} s (sparql_penalty)",
            )

    def check_failed(self, address: str, allowed: int) -> None:
        """Raise RateLimited while ``address`` (``addr:IP``) is refused for its failed
        authentications (``refuse_failed``); a look in this host's table only."""
        wait = self._left(FAILED + address)
        if wait > 0:
            raise RateLimited(
                f"more than {allowed} failed authentications a minute from this caller",
                retry_after=math.ceil(wait),
                hint=f"retry after {math.ceil(wait)} s (server_auth_failures)",
            )

    def refuse_failed(self, address: str, seconds: float) -> None:
        """Refuse ``address`` for ``seconds`` after its last allowed failed
        authentication: here, and on every host when shared."""
        self.hold(FAILED + address, seconds)
        if self.shared is not None:
            self.shared.refuse(FAILED + address, seconds)

    def _tidy(self, now: float) -> None:
        """Past 10,000 callers in a table, drop the ended ones: at most once a second,
        so a flood of new callers costs one pass a second, not one per caller (the
        lock is held)."""
        full = len(self._until) > _TABLE_SIZE or len(self._strikes) > _TABLE_SIZE
        if full and now - self._tidied >= 1.0:
            self._tidied = now
            self._prune(now)

    def _prune(self, now: float) -> None:
        self._until = {c: t for c, t in self._until.items() if t > now}
        self._strikes = {c: ts for c, ts in self._strikes.items() if now - ts[-1] < self.seconds}

    def _left(self, caller: str) -> float:
        with self._lock:
            wait = self._until.get(caller, 0.0) - self._clock()
        if self.gate is not None and caller:
            wait = max(wait, self.gate.caller_left(caller))
        return wait

    def strike(self, caller: str, *, allowed: int = 3) -> None:
        """Count a refusal of ``caller``'s query for its shape; past ``allowed`` of them
        within ``seconds``, ``caller`` goes in the box (one mistake costs nothing)."""
        if not caller or self.seconds <= 0:
            return
        shared = self.shared.strikes(caller, self.seconds) if self.shared is not None else None
        count = self._local_strike(caller) if shared is None else shared
        if count > allowed:
            self.punish(caller)

    def _local_strike(self, caller: str) -> int:
        with self._lock:
            now = self._clock()
            recent = [t for t in self._strikes.get(caller, []) if now - t < self.seconds]
            recent.append(now)
            self._strikes[caller] = recent
            self._tidy(now)
        return len(recent)

    def punish(self, caller: str) -> None:
        """Refuse ``caller`` for ``seconds``: here, and on every host when shared."""
        if not caller or self.seconds <= 0:
            return
        self.hold(caller, self.seconds)
        if self.shared is not None:
            self.shared.refuse(caller, self.seconds)

    def hold(self, caller: str, seconds: float) -> None:
        """Refuse ``caller`` for ``seconds`` in this process and the gate's table."""
        with self._lock:
            now = self._clock()
            self._until[caller] = max(self._until.get(caller, 0.0), now + seconds)
            self._tidy(now)
        if self.gate is not None:
            self.gate.refuse_caller(caller, seconds)
            if caller.startswith(ADDRESS_CALLER):  # also before its requests are read
                self.gate.refuse(caller.removeprefix(ADDRESS_CALLER), seconds)

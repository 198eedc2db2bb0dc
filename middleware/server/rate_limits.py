"""The per-caller request limit and the per-address failed-authentication limit, kept by
Flask-Limiter.

The limit must hold on every way in: the Flask routes and the ``/sparql`` fast path
that answers plain GETs in front of Flask. Both ask ``Admission.admit``, which knows
the caller only after the API key was checked, so the limits are not declared on the
routes: ``admit`` calls the strategy of the app's ``Limiter`` (its storage and its
moving window) directly, one ``hit`` per request. The ``Limiter``'s own hooks carry
no limits.

With ``shared`` (``server_state_url``) the counts live in Redis, one for every worker
and host. While Redis cannot be reached, ``outage`` decides: ``refuse`` raises
``StateUnavailable`` (503), ``local`` counts in this process until Redis is back.

>>> from flask import Flask
>>> limits = RequestLimits(Flask("doc"), per_minute=1, auth_failures=0)
>>> limits.check("key:1")
>>> try:
...     limits.check("key:1")
... except Exception as err:
...     print(err.message)
more than 1 requests a minute from this caller
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from flask import Flask, g
from flask_limiter import Limiter
from limits import RateLimitItem, RateLimitItemPerMinute
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter, RateLimiter

from middleware.errors import RateLimited, StateUnavailable
from middleware.server.shared.leases import Leases
from middleware.server.shared.redis_state import SharedRedis

T = TypeVar("T")


def _no_key() -> str:
    """Flask-Limiter's key function; never used, since no limit is declared on a route."""
    return str(g.get("caller", ""))


class RequestLimits:
    """``per_minute`` requests a minute per caller and ``auth_failures`` failed
    authentications a minute per address (0: no limit), in any rolling minute."""

    def __init__(
        self,
        app: Flask,
        *,
        per_minute: int,
        auth_failures: int,
        shared: SharedRedis | None = None,
        outage: str = "refuse",
    ) -> None:
        storage, options = "memory://", cast(dict[str, Any], {})
        if shared is not None:
            storage = shared.url
            options = {"key_prefix": shared.key("limits"), **shared.options}
        self.extension = Limiter(
            _no_key, app=app, strategy="moving-window", storage_uri=storage, storage_options=options
        )
        self.per_minute = per_minute
        self.shared = shared
        self.outage = outage
        self._local = MovingWindowRateLimiter(MemoryStorage())  # while Redis is away
        self._requests = _item(per_minute, "requests")
        self._leases = Leases(per_minute) if shared is not None and per_minute > 0 else None
        self._failures = _item(auth_failures, "auth-failures")

    @property
    def failures_allowed(self) -> int:
        """Failed authentications an address may make in a minute (0: no limit)."""
        return self._failures.amount if self._failures is not None else 0

    def check(self, caller: str) -> None:
        """Spend one of ``caller``'s requests, or raise RateLimited. With shared counts,
        a busy caller's requests are taken a few at a time (``shared/leases.py``)."""
        item = self._requests
        if item is None:
            return
        leases = self._leases
        if leases is not None and leases.take(caller):
            return  # leased a moment ago
        size = leases.claim(caller) if leases is not None else 1
        if leases is not None and size > 1:
            leased = False
            try:
                leased = self._counted(lambda lim: lim.hit(item, caller, cost=size))
            finally:
                leases.settle(caller, size - 1 if leased else 0)  # this request is one
            if leased:
                return
        if not self._counted(lambda lim: lim.hit(item, caller)):
            raise self._refusal(item, caller, "requests")

    def count_failure(self, address: str) -> float:
        """One failed authentication of ``address``; the seconds until it may fail
        again when that was its last allowed one (it is to be refused meanwhile), else 0."""
        item = self._failures
        if item is None:
            return 0.0
        self._counted(lambda lim: lim.hit(item, address))
        if self._counted(lambda lim: lim.test(item, address)):
            return 0.0
        return float(self._refusal(item, address, "failed authentications").retry_after)

    def _counted(self, action: Callable[[RateLimiter], T]) -> T:
        """``action`` on the shared counts; on this process's own while Redis is away
        and ``outage`` is ``local`` (else StateUnavailable)."""
        shared = self.shared
        if shared is None:
            return action(self.extension.limiter)
        try:
            return shared.call(lambda: action(self.extension.limiter), what="rate limits")
        except StateUnavailable:
            if self.outage != "local":
                raise
            return action(self._local)

    def _refusal(self, item: RateLimitItem, key: str, what: str) -> RateLimited:
        try:
            reset = self._counted(lambda lim: lim.get_window_stats(item, key).reset_time)
        except StateUnavailable:
            reset = time.time() + 60  # refused already; the wait is at most a minute
        wait = max(1, math.ceil(reset - time.time()))
        return RateLimited(
            f"more than {item.amount} {what} a minute from this caller",
            retry_after=wait,
            hint=f"retry after {wait} s",
        )


def _item(per_minute: int, namespace: str) -> RateLimitItem | None:
    return RateLimitItemPerMinute(per_minute, namespace=namespace) if per_minute > 0 else None

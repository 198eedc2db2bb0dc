"""The per-caller request limit and the per-address failed-authentication limit, kept by
Flask-Limiter.

The limit must hold on every way in: the Flask routes and the ``/sparql`` fast path
that answers plain GETs in front of Flask. Both ask ``Admission.admit``, which knows
the caller only after the API key was checked, so the limits are not declared on the
routes: ``admit`` calls the strategy of the app's ``Limiter`` (its storage and its
moving window) directly, one ``hit`` per request. The ``Limiter``'s own hooks carry
no limits.

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

from flask import Flask, g
from flask_limiter import Limiter
from limits import RateLimitItem, RateLimitItemPerMinute

from middleware.errors import RateLimited


def _no_key() -> str:
    """Flask-Limiter's key function; never used, since no limit is declared on a route."""
    return str(g.get("caller", ""))


class RequestLimits:
    """``per_minute`` requests a minute per caller and ``auth_failures`` failed
    authentications a minute per address (0: no limit), in any rolling minute."""

    def __init__(self, app: Flask, *, per_minute: int, auth_failures: int) -> None:
        self.extension = Limiter(
            _no_key, app=app, strategy="moving-window", storage_uri="memory://"
        )
        self.per_minute = per_minute
        self._requests = _item(per_minute, "requests")
        self._failures = _item(auth_failures, "auth-failures")

    def check(self, caller: str) -> None:
        """Spend one of ``caller``'s requests, or raise RateLimited."""
        if self._requests is not None and not self.extension.limiter.hit(self._requests, caller):
            raise self._refusal(self._requests, caller, "requests")

    def refuse_if_failed(self, address: str) -> None:
        """RateLimited while ``address`` has no failed authentication left; spends none."""
        if self._failures is not None and not self.extension.limiter.test(self._failures, address):
            raise self._refusal(self._failures, address, "failed authentications")

    def count_failure(self, address: str) -> None:
        """One failed authentication of ``address``."""
        if self._failures is not None:
            self.extension.limiter.hit(self._failures, address)

    def _refusal(self, item: RateLimitItem, key: str, what: str) -> RateLimited:
        reset = self.extension.limiter.get_window_stats(item, key).reset_time
        wait = max(1, math.ceil(reset - time.time()))
        return RateLimited(
            f"more than {item.amount} {what} a minute from this caller",
            retry_after=wait,
            hint=f"retry after {wait} s",
        )


def _item(per_minute: int, namespace: str) -> RateLimitItem | None:
    return RateLimitItemPerMinute(per_minute, namespace=namespace) if per_minute > 0 else None

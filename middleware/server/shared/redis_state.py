"""The Redis that every worker and host of one service shares (``server_state_url``).

Each call goes through ``SharedRedis.call``: a Redis that cannot be reached becomes a
``StateUnavailable`` (503 with ``Retry-After``), and for the next second every call
fails at once instead of waiting out another timeout, so a flood during an outage
costs no more than a flood of 503s. The first call after that second tries again: the
service recovers by itself when Redis is back.

>>> shared = SharedRedis("redis://127.0.0.1:1/0", prefix="demo:", timeout=0.1)
>>> shared.key("answers", "x"), shared.where
('demo:answers:x', 'redis://127.0.0.1:1/0')
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

from middleware.config import Settings
from middleware.errors import ConfigError, StateUnavailable
from middleware.kg.backends.endpoint_auth import secret
from middleware.support.urls import without_credentials

T = TypeVar("T")
OUTAGE_SECONDS = 1.0  # after a failed call, calls fail at once for this long
RETRY_AFTER = 5  # seconds a client is told to wait while Redis is unreachable
log = logging.getLogger("middleware.server")


class SharedRedis:
    """A Redis client for ``url`` whose keys all start with ``prefix``."""

    def __init__(self, url: str, *, prefix: str, timeout: float) -> None:
        import redis  # the 'redis' extra: loaded only when the setting is used

        if not url.startswith(("redis://", "rediss://")):
            raise ConfigError(
                f"server_state_url must be a redis:// or rediss:// URL, not {without_credentials(url)!r}",
                hint="e.g. redis://:env-password@redis.internal:6379/0, or rediss:// for TLS",
            )
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self.where = without_credentials(url)
        self.options = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
        self.client = redis.Redis.from_url(url, **self.options)
        self.errors: tuple[type[Exception], ...] = (redis.RedisError, OSError)
        self._down_until = 0.0
        self._lock = threading.Lock()

    @classmethod
    def from_settings(
        cls, settings: Settings, env: Mapping[str, str] | None = None
    ) -> SharedRedis | None:
        """The Redis ``settings`` name, or None when ``server_state_url`` is unset."""
        url = secret(
            settings.server_state_url, "server_state_url", os.environ if env is None else env
        )
        if not url:
            return None
        try:
            return cls(
                url, prefix=settings.server_state_prefix, timeout=settings.server_state_timeout
            )
        except ImportError as err:
            raise ConfigError(
                "server_state_url is set but the Redis client is not installed",
                hint="pip install 'kg-middleware[redis]'",
            ) from err

    def key(self, *parts: str) -> str:
        """A key of this deployment: the prefix and ``parts`` joined by colons."""
        return self.prefix + ":".join(parts)

    @property
    def reachable(self) -> bool:
        """False during the second after a call failed (no call is tried then)."""
        return time.monotonic() >= self._down_until

    def call(self, action: Callable[[], T], *, what: str) -> T:
        """``action()`` against Redis; StateUnavailable when Redis cannot be reached."""
        if not self.reachable:
            raise self._unavailable(what, "it did not answer a moment ago")
        try:
            return action()
        except self.errors as err:
            with self._lock:
                first = self.reachable
                self._down_until = time.monotonic() + OUTAGE_SECONDS
            if first:
                log.warning("kgmw: shared state %s unreachable (%s): %s", self.where, what, err)
            raise self._unavailable(what, f"{type(err).__name__}: {err}") from err

    def ping(self) -> None:
        """Raise StateUnavailable unless Redis answers now (tried even during an outage)."""
        self._down_until = 0.0
        self.call(self.client.ping, what="ping")

    def _unavailable(self, what: str, cause: str) -> StateUnavailable:
        return StateUnavailable(
            f"the shared state ({self.where}) cannot be reached for {what}: {cause}",
            retry_after=RETRY_AFTER,
            hint=f"retry after {RETRY_AFTER} s; the service recovers by itself when Redis is back",
        )

    def close(self) -> None:
        self.client.close()

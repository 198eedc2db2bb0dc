"""The Redis that every worker and host of one service shares (``server_state_url``).

Each call goes through ``SharedRedis.call``: a Redis that cannot be reached becomes a
``StateUnavailable`` (503 with ``Retry-After``), and for the next second every call
fails at once instead of waiting out another timeout, so a flood during an outage
costs no more than a flood of 503s. The first call after that second tries again: the
service recovers by itself when Redis is back. What a client sees (the 503, ``/readyz``)
never names the Redis; the log does, once per outage, without its password.

>>> shared = SharedRedis("redis://:pw@127.0.0.1:1/0?password=pw", prefix="demo:", timeout=0.1)
>>> shared.key("answers", "x"), shared.where
('demo:answers:x', 'redis://127.0.0.1:1/0')
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from middleware.config import Settings
from middleware.errors import ConfigError, StateUnavailable
from middleware.kg.backends.endpoint_auth import secret

T = TypeVar("T")
OUTAGE_SECONDS = 1.0  # after a failed call, calls fail at once for this long
RETRY_AFTER = 5  # seconds a client is told to wait while Redis is unreachable
log = logging.getLogger("middleware.server")


class SharedRedis:
    """A Redis client for ``url`` whose keys all start with ``prefix``."""

    def __init__(self, url: str, *, prefix: str, timeout: float) -> None:
        import redis  # the 'redis' extra: loaded only when the setting is used

        self.where = describe(url)  # raises ConfigError for a URL redis-py cannot read
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self.options = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
        self.client = redis.Redis.from_url(url, **self.options)
        try:  # every option checked now (no connection is made), not in a worker later
            self.client.connection_pool.make_connection().disconnect()  # type: ignore[no-untyped-call]
        except (TypeError, ValueError, redis.RedisError):
            raise ConfigError(
                "server_state_url has an option redis-py does not take",
                hint="keep to redis-py's URL options, e.g. ?ssl_ca_certs=/path/ca.pem",
            ) from None
        self.errors: tuple[type[Exception], ...] = (redis.RedisError, OSError)
        self._down_until = 0.0
        self._logged = False  # this outage's warning is written
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
            raise self._unavailable(what)
        try:
            done = action()
        except self.errors as err:
            with self._lock:
                self._down_until = time.monotonic() + OUTAGE_SECONDS
                first, self._logged = not self._logged, True
            if first:  # once per outage, not once a second
                log.warning("kgmw: shared state %s unreachable (%s): %s", self.where, what, err)
            raise self._unavailable(what) from err
        if self._logged:
            self._logged = False
            log.warning("kgmw: shared state %s reachable again", self.where)
        return done

    def ping(self) -> None:
        """Raise StateUnavailable unless Redis answers (within the second after a failed
        call it is not tried: a balancer polling /readyz must not let every request
        wait out a timeout again)."""
        self.call(self.client.ping, what="ping")

    def _unavailable(self, what: str) -> StateUnavailable:
        return StateUnavailable(
            f"the service's shared state cannot be reached for {what}; the server log says why",
            retry_after=RETRY_AFTER,
            hint=f"retry after {RETRY_AFTER} s; the service recovers by itself when Redis is back",
        )

    def close(self) -> None:
        self.client.close()


def describe(url: str) -> str:
    """``scheme://host:port/db`` of a Redis URL, nothing else (no user, password or
    options, wherever the URL put them); ConfigError for a URL redis-py cannot read,
    naming no part of it."""
    from redis.connection import parse_url

    scheme = url.partition("://")[0]
    hint = (
        "write redis://[:PASSWORD@]HOST:PORT/DB or rediss:// for TLS; a password with "
        "/ # ? @ or % in it must be percent-encoded (/ as %2F)"
    )
    if scheme not in ("redis", "rediss"):
        raise ConfigError("server_state_url must be a redis:// or rediss:// URL", hint=hint)
    if "#" in url or "@" in url.partition("?")[2]:  # a password's # or ? cuts the host short
        raise ConfigError("server_state_url is not a Redis URL redis-py can read", hint=hint)
    try:
        parts: dict[str, Any] = parse_url(url)  # type: ignore[no-untyped-call]
    except ValueError:  # its message may quote a piece of the password
        raise ConfigError(
            "server_state_url is not a Redis URL redis-py can read", hint=hint
        ) from None
    path = url.partition("://")[2].partition("?")[0].rpartition("@")[2].partition("/")[2]
    if not parts.get("host") or (path and not path.isdigit()):
        raise ConfigError("server_state_url must name a host and a database number", hint=hint)
    return f"{scheme}://{parts['host']}:{parts.get('port', 6379)}/{parts.get('db', 0)}"

"""What an executor's end means for its request and its caller: a lost executor's cause,
an error it reported (as the same class in the service), a refusal for capacity, and
what the pool tells about callers (``Penalties``)."""

from __future__ import annotations

import math
from typing import Protocol

import middleware.errors as error_classes
from middleware.errors import (
    BadRequest,
    EndpointError,
    EndpointTimeout,
    MiddlewareError,
    RateLimited,
)
from middleware.kg.executors.process import EXIT_OVERRAN


def lost(code: int | None, memory_mb: int, timeout: float) -> MiddlewareError:
    if code == EXIT_OVERRAN:  # the executor's own clock stopped it
        return EndpointTimeout(
            f"the query ran past its {timeout:g} s timeout; its executor stopped itself",
            hint="narrow the query, or raise the timeout setting (--timeout, KGMW_TIMEOUT)",
        )
    if code is not None and code in (-6, 134):  # abort: an allocation past the cap
        return BadRequest(
            f"the query needed more than the executor's {memory_mb} MB of memory",
            hint="narrow the query (a LIMIT does not bound ORDER BY over a large join), "
            "or raise sparql_executor_memory",
        )
    return BadRequest(
        f"the query crashed its executor (exit {code}); the service is unaffected",
        hint="simplify the query: less nesting, fewer alternatives",
    )


def rebuild(name: str, message: str, hint: str | None) -> MiddlewareError:
    """The executor's error, as the same class in this process."""
    kind = getattr(error_classes, name, None)
    if isinstance(kind, type) and issubclass(kind, MiddlewareError):
        try:
            return kind(message, hint=hint)
        except TypeError:  # a class with its own signature
            pass
    return EndpointError(message, hint=hint)


class Penalties(Protocol):
    """What the pool tells about a caller: ``check`` refuses one in the box, ``strike``
    counts a small fault, ``punish`` boxes a caller whose query had to be stopped."""

    def check(self, caller: str) -> None: ...
    def strike(self, caller: str) -> None: ...
    def punish(self, caller: str) -> None: ...


class NoPenalties:
    """Nobody is ever boxed (library and command-line use)."""

    def check(self, caller: str) -> None:
        pass

    def strike(self, caller: str) -> None:
        pass

    def punish(self, caller: str) -> None:
        pass


def no_room(longs: int, free_in: float) -> RateLimited:
    wait = max(1, math.ceil(free_in))
    return RateLimited(
        f"the service already runs {longs} long queries, as many as it allows at once, "
        "and this query ran long too; it was stopped (this is not held against you)",
        retry_after=wait,
        hint=f"retry in {wait} s, when a long query's time is up, or raise sparql_executors",
    )

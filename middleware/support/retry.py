"""The one retry loop every client that talks HTTP uses (SPARQL endpoints, LLM servers)."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date).

    >>> parse_retry_after("3"), parse_retry_after(None), parse_retry_after("soon")
    (3.0, None, None)
    >>> parse_retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0)
    6.0
    """
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def backoff_delay(attempt: int, *, backoff: float, cap: float) -> float:
    """Exponential delay before retry number ``attempt`` (1-based), capped.

    >>> [backoff_delay(n, backoff=0.5, cap=3.0) for n in (1, 2, 3, 4)]
    [0.5, 1.0, 2.0, 3.0]
    """
    return float(min(backoff * 2 ** (attempt - 1), cap))


class Retryable(Exception):
    """Raised by one attempt that may succeed if tried again.

    ``give_up(attempts)`` is the error to raise once no retry is left; ``retry_after``
    is what the server asked to wait, if it said.
    """

    def __init__(
        self,
        give_up: Callable[[int], Exception],
        *,
        reason: str = "",
        retry_after: float | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(reason or "retryable")
        self.give_up = give_up
        self.reason = reason
        self.retry_after = retry_after
        self.cause = cause


def retry_call(
    attempt: Callable[[], T],
    *,
    retries: int,
    backoff: float,
    max_wait: float,
    too_long: Callable[[float, str], Exception],
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """``attempt()`` until it returns, at most ``retries`` times again after a Retryable.

    Waits what Retry-After asked, else doubling from ``backoff``; a server asking for
    more than ``max_wait`` seconds ends the loop at once with ``too_long(seconds, reason)``.

    >>> calls = []
    >>> def flaky() -> str:
    ...     calls.append(1)
    ...     if len(calls) < 3:
    ...         raise Retryable(lambda n: RuntimeError(f"gave up after {n}"))
    ...     return "ok"
    >>> retry_call(flaky, retries=3, backoff=0, max_wait=1, too_long=lambda s, r: ValueError(r), sleep=lambda s: None)
    'ok'
    >>> def down() -> str:
    ...     raise Retryable(lambda n: RuntimeError(f"gave up after {n}"))
    >>> retry_call(down, retries=1, backoff=0, max_wait=1, too_long=lambda s, r: ValueError(r), sleep=lambda s: None)
    Traceback (most recent call last):
    ...
    RuntimeError: gave up after 2
    """
    attempts = 0
    while True:
        attempts += 1
        try:
            return attempt()
        except Retryable as retry:
            sleep(_wait_or_give_up(retry, attempts, retries, backoff, max_wait, too_long))


async def aretry_call(
    attempt: Callable[[], Awaitable[T]],
    *,
    retries: int,
    backoff: float,
    max_wait: float,
    too_long: Callable[[float, str], Exception],
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """``retry_call`` for a coroutine: the same waits and errors, awaited.

    >>> calls = []
    >>> async def flaky() -> str:
    ...     calls.append(1)
    ...     if len(calls) < 2:
    ...         raise Retryable(lambda n: RuntimeError(f"gave up after {n}"))
    ...     return "ok"
    >>> asyncio.run(aretry_call(flaky, retries=1, backoff=0, max_wait=1, too_long=lambda s, r: ValueError(r)))
    'ok'
    """
    attempts = 0
    while True:
        attempts += 1
        try:
            return await attempt()
        except Retryable as retry:
            await sleep(_wait_or_give_up(retry, attempts, retries, backoff, max_wait, too_long))


def _wait_or_give_up(
    retry: Retryable,
    attempts: int,
    retries: int,
    backoff: float,
    max_wait: float,
    too_long: Callable[[float, str], Exception],
) -> float:
    """Seconds to wait before the next attempt; raises when there is none."""
    wait = retry.retry_after
    if wait is not None and wait > max_wait:
        raise too_long(wait, retry.reason) from retry.cause
    if attempts > retries:
        raise retry.give_up(attempts) from retry.cause
    return wait if wait is not None else backoff_delay(attempts, backoff=backoff, cap=max_wait)

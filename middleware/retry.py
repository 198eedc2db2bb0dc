"""Retry helpers shared by every client that talks HTTP (SPARQL endpoints, LLM servers)."""

from __future__ import annotations

import email.utils
import time


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

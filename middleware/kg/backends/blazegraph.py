"""What Blazegraph (the engine behind the Wikidata Query Service) says when it fails.

Its errors are Java stack traces in a ``text/plain`` body, starting with the query::

    SPARQL-QUERY: queryStr=SELEC ?x ...
    java.util.concurrent.ExecutionException: org.openrdf.query.MalformedQueryException: ...

A query past the service's time limit (60 s on WDQS) ends in HTTP 500 with a
``java.util.concurrent.TimeoutException``, which no retry will cure; a syntax error is
HTTP 400 with a ``MalformedQueryException``.

>>> error = parse_error(b"SPARQL-QUERY: queryStr=ASK {}\\njava.util.concurrent.ExecutionException:"
...     b" java.util.concurrent.TimeoutException\\n\\tat ...")
>>> error.kind
'timeout'
>>> parse_error(b"SPARQL-QUERY: queryStr=SELEC\\nCaused by: org.openrdf.query."
...     b"MalformedQueryException: Encountered \\"SELEC\\"\\n").text
'Encountered "SELEC"'
>>> parse_error(b"<html>Bad gateway</html>") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from middleware.errors import EndpointTimeout, MiddlewareError, QueryRejected

_TIMEOUT = b"java.util.concurrent.TimeoutException"
_MALFORMED = re.compile(rb"MalformedQueryException:\s*([^\n]*)")


@dataclass(frozen=True)
class BlazegraphError:
    """``timeout`` or ``rejected``, with what the server said (one line)."""

    kind: str
    text: str

    def __str__(self) -> str:
        return self.text


class BlazegraphFailure(Exception):
    """An HTTP error whose body is a Blazegraph failure (raised by the endpoint's client)."""

    def __init__(self, status: int, error: BlazegraphError) -> None:
        super().__init__(f"HTTP {status}: {error}")
        self.status = status
        self.error = error


def parse_error(body: bytes) -> BlazegraphError | None:
    """The failure a Blazegraph error body reports, or None if it is not one of those."""
    if _TIMEOUT in body:
        return BlazegraphError("timeout", "the query ran past the server's time limit")
    found = _MALFORMED.findall(body)
    if found:
        said = found[-1].decode("utf-8", "replace").strip()
        return BlazegraphError("rejected", said[:500] or "malformed query")
    return None


def endpoint_error(error: BlazegraphError, url: str, time_limit: float | None) -> MiddlewareError:
    """The middleware's error for ``error`` from the endpoint at ``url``."""
    if error.kind == "timeout":
        limit = f" ({time_limit:g} s)" if time_limit else ""
        return EndpointTimeout(
            f"endpoint {url} stopped the query at its time limit{limit}",
            hint="the server ends every query at its limit (Wikidata's query service: 60 s) "
            "and a retry will not help; narrow the query, add a LIMIT, or use a local copy",
            endpoint=url,
        )
    return QueryRejected(
        f"endpoint {url} rejected the query: {error.text}",
        hint="the server's parser refused it (Blazegraph: MalformedQueryException); fix the "
        "query's syntax",
        endpoint=url,
    )

"""The engine's lazy result read into a ``QueryResult``, at most ``max_rows`` rows.

The deadline is looked at between rows only: this is for the store's own template
queries, which are bounded by their shape. Caller queries run in executor processes,
which are stopped from outside (``kg/executors/``), rows or no rows.
"""

from __future__ import annotations

import time

import pyoxigraph as ox

from middleware.errors import EndpointTimeout
from middleware.kg.base import QueryResult
from middleware.kg.terms import Term

_TIME_CHECK_EVERY = 256


def read_result(
    result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples,
    *,
    deadline: float,
    max_rows: int | None,
    source: str,
) -> QueryResult:
    """``result`` as rows, triples or a boolean; ``truncated`` past ``max_rows``."""
    if isinstance(result, ox.QueryBoolean):
        return QueryResult("ask", boolean=bool(result))
    if isinstance(result, ox.QuerySolutions):
        variables = [v.value for v in result.variables]
        rows: list[dict[str, Term]] = []
        for count, solution in enumerate(result):
            if max_rows is not None and count >= max_rows:
                return QueryResult("select", variables=variables, rows=rows, truncated=True)
            if count % _TIME_CHECK_EVERY == 0 and time.monotonic() > deadline:
                raise EndpointTimeout(
                    f"local store {source!r}: query ran past its timeout",
                    hint="narrow the query, or raise the timeout setting (--timeout, KGMW_TIMEOUT)",
                )
            # a solution iterates its values in the order of ``variables`` (None: unbound);
            # zipping them reads each once, where indexing by name looked each up twice
            rows.append({n: v for n, v in zip(variables, solution, strict=True) if v is not None})
        return QueryResult("select", variables=variables, rows=rows)
    triples: list[tuple[Term, Term, Term]] = []
    for triple in result:
        if max_rows is not None and len(triples) >= max_rows:
            return QueryResult("graph", triples=triples, truncated=True)
        triples.append((triple.subject, triple.predicate, triple.object))
    return QueryResult("graph", triples=triples)

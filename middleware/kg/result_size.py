"""How large a query's result is, in the bytes its terms take, and the cap on it.

Every term counts whole: a literal's text, datatype IRI and language tag, an IRI, a
blank node's name (as N-Triples writes them, in UTF-8), so neither a long datatype
IRI nor characters of four bytes slip past the count.

>>> import pyoxigraph as ox
>>> result = QueryResult("select", variables=["x"], rows=[{"x": ox.Literal("é")}])
>>> result_bytes(result)
4
"""

from __future__ import annotations

from middleware.errors import PayloadTooLarge
from middleware.kg.base import QueryResult


def result_bytes(result: QueryResult) -> int:
    """The bytes of every term of ``result``."""
    terms = [term for row in result.rows for term in row.values()]
    terms += [term for triple in result.triples for term in triple]
    return sum(len(str(term).encode("utf-8")) for term in terms)


def check_size(size: int, max_bytes: int | None) -> None:
    """Refuse a result of ``size`` bytes past ``max_bytes`` (``sparql_max_result_mb``)."""
    if max_bytes is not None and size > max_bytes:
        raise PayloadTooLarge(
            f"the query's result has more than {max_bytes >> 20} MB, the most a result may have",
            hint="add a LIMIT, select fewer or shorter values, or raise sparql_max_result_mb",
        )

"""Tasks an executor runs on its open store: module-level functions, so a job names
them by reference (``task(store, text, *args)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from middleware.errors import PayloadTooLarge
from middleware.kg.base import QueryResult

if TYPE_CHECKING:
    from middleware.kg.sparql_guard import QueryDataset


class Executes(Protocol):
    """A store that runs a checked query text itself (``LocalStore``)."""

    def _execute(
        self,
        sparql: str,
        timeout: float,
        max_rows: int | None = None,
        dataset: QueryDataset | None = None,
    ) -> QueryResult: ...


def run_query(
    store: Executes,
    text: str,
    timeout: float,
    max_rows: int | None,
    dataset: QueryDataset | None,
    max_bytes: int | None = None,
) -> QueryResult:
    """A caller's checked query ``text``, its result parsed (at most ``max_rows`` rows,
    their terms' text at most ``max_bytes``)."""
    result = store._execute(text, timeout, max_rows, dataset)
    if max_bytes is not None:
        terms = [t for row in result.rows for t in row.values()]
        terms += [t for triple in result.triples for t in triple]
        check_size(sum(len(term.value) for term in terms), max_bytes)
    return result


def check_size(size: int, max_bytes: int) -> None:
    """Refuse a result of ``size`` bytes past ``max_bytes`` (``sparql_max_result_mb``)."""
    if size > max_bytes:
        raise PayloadTooLarge(
            f"the query's result has more than {max_bytes >> 20} MB, the most a result may have",
            hint="add a LIMIT, select fewer or shorter values, or raise sparql_max_result_mb",
        )

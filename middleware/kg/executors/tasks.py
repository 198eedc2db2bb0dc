"""Tasks an executor runs on its open store: module-level functions, so a job names
them by reference (``task(store, text, *args)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from middleware.kg.base import QueryResult
from middleware.kg.result_size import check_size, result_bytes

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
    check_size(result_bytes(result), max_bytes)
    return result

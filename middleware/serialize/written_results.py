"""The ``/sparql`` task an executor runs: a query's result, written in its response format.

A SELECT whose whole result fits the caps is written by the engine
(``native_results``); any other result, or one past a cap, is run again row by row,
which stops at ``max_rows`` and marks the result cut (``sparql_results``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from middleware.kg.engine_errors import engine_error
from middleware.kg.executors.delivery import Written
from middleware.kg.result_size import check_size
from middleware.serialize.native_results import NATIVE_FORMATS, write_native
from middleware.serialize.sparql_results import write_result

if TYPE_CHECKING:
    from middleware.kg.backends.local import LocalStore
    from middleware.kg.sparql_guard import QueryDataset


def write_query(
    store: LocalStore,
    text: str,
    fmt: str,
    timeout: float,
    max_rows: int | None,
    dataset: QueryDataset | None,
    max_bytes: int | None = None,
) -> Written:
    """``text``'s result on ``store`` as the body of a response in format ``fmt``, at
    most ``max_bytes`` long."""
    written = _write(store, text, fmt, timeout, max_rows, dataset)
    check_size(len(written.body), max_bytes)
    return written


def _write(
    store: LocalStore,
    text: str,
    fmt: str,
    timeout: float,
    max_rows: int | None,
    dataset: QueryDataset | None,
) -> Written:
    if fmt in NATIVE_FORMATS:
        try:
            body = write_native(store.engine_result(text, dataset), fmt, max_rows=max_rows)
        except OSError as err:  # a SERVICE call or the storage failed while reading
            raise engine_error(err, store.name) from err
        if body is not None:
            return Written(body, "select", False)
    result = store._execute(text, timeout, max_rows, dataset)
    return Written(write_result(result, fmt), result.kind, result.truncated)

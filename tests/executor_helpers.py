"""Executor pools over a store folder, and the /sparql task run through one, for tests."""

from __future__ import annotations

import functools
import socket
from pathlib import Path
from typing import Any

from middleware.kg.backends.local import LocalStore
from middleware.kg.executors.delivery import Delivery
from middleware.kg.executors.pool import QueryPool
from middleware.serialize.written_results import write_query


def pool_over(path: Path, **options: Any) -> QueryPool:
    """A pool of executors that open the store at ``path`` read-only."""
    opener = functools.partial(LocalStore, str(path), profile="generic", read_only=True)
    options.setdefault("memory_mb", 1536)  # the setting's default (sparql_executor_memory)
    return QueryPool(opener, name=path.name, **options)


def run_written(
    pool: QueryPool,
    query: str,
    *,
    fmt: str = "json",
    timeout: float = 10,
    max_rows: int | None = 10,
    client: str = "",
    caller: socket.socket | None = None,
    delivery: Delivery | None = None,
) -> Any:
    """``query`` through ``pool`` as ``/sparql`` runs it: a ``Written`` or a ``Sent``."""
    return pool.run(
        write_query,
        query,
        (fmt, timeout, max_rows, None),
        timeout=timeout,
        client=client,
        caller=caller,
        delivery=delivery,
    )

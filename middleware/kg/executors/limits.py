"""How many executors a store's caller queries get, their memory, and where they may
reach (the ``sparql_executor*`` settings and ``sparql_service_allowlist``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ExecutorLimits:
    """``workers`` executors of ``memory_mb`` each, ``total_mb`` resident together
    (0: no shared cap), calling out only to the endpoints in ``services``. No workers means no caller query runs at all."""

    workers: int = 2
    memory_mb: int = 1536
    total_mb: int = 1024
    services: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: Any) -> ExecutorLimits:
        allowed = (settings.sparql_service_allowlist or "").split(",")
        return cls(
            workers=settings.sparql_executors,
            memory_mb=settings.sparql_executor_memory,
            total_mb=settings.sparql_executors_memory_total,
            services=tuple(url.strip() for url in allowed if url.strip()),
        )

"""Open the graph a command or request asks for: a store, an endpoint, or the sample."""

from __future__ import annotations

from middleware.config import Settings
from middleware.errors import BadRequest
from middleware.kg.backends.registry import BACKENDS
from middleware.kg.executors.limits import ExecutorLimits
from middleware.kg.operations import GraphOperations
from middleware.kg.sample import sample_store
from middleware.kg.sparql_guard import QueryLimits, QueryPolicy


def open_graph(settings: Settings, *, read_only: bool = True) -> GraphOperations:
    """The graph named by ``settings``: the backend they choose (``endpoint`` or
    ``store``, see ``backends/registry.py``), else the bundled sample graph."""
    chosen = [backend for backend in BACKENDS if backend.chosen(settings)]
    if len(chosen) > 1:
        flags = " or ".join(backend.flag for backend in chosen)
        raise BadRequest(f"give either {flags}, not both")
    graph: GraphOperations
    if chosen:
        graph = chosen[0].open(settings, read_only)
    else:
        graph = sample_store(
            cache_dir=settings.cache_dir,
            progress=settings.progress,
            timeout=settings.timeout,
            executors=ExecutorLimits.from_settings(settings),
        )
    graph.neighbors_limit = settings.neighbors_limit
    graph.paths_limit = settings.paths_limit
    graph.default_max_hops = settings.max_hops
    return graph


def query_policy(settings: Settings) -> QueryPolicy:
    """What a caller's SPARQL may do under ``settings``: the limits and the allowlist."""
    allowed = [p.strip() for p in (settings.sparql_service_allowlist or "").split(",")]
    return QueryPolicy(
        QueryLimits(
            max_chars=settings.sparql_max_query_chars,
            max_depth=settings.sparql_max_depth,
            max_terms=settings.sparql_max_terms,
            max_result_bytes=settings.sparql_max_result_mb << 20,
        ),
        tuple(p for p in allowed if p),
        tuple(p.strip() for p in settings.sparql_endpoint_functions.split(",") if p.strip()),
    )

"""Open the graph a command or request asks for: a store, an endpoint, or the sample."""

from __future__ import annotations

from middleware.config import Settings
from middleware.errors import BadRequest
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.endpoint_auth import EndpointAuth
from middleware.kg.backends.local import LocalStore
from middleware.kg.executors.limits import ExecutorLimits
from middleware.kg.load_guard import LoadCaps
from middleware.kg.operations import GraphOperations
from middleware.kg.sample import sample_store
from middleware.kg.sparql_guard import QueryLimits, QueryPolicy


def open_graph(settings: Settings, *, read_only: bool = True) -> GraphOperations:
    """The graph named by ``settings``: ``endpoint``, else ``store``, else the sample graph."""
    if settings.endpoint and settings.store:
        raise BadRequest("give either --store or --endpoint, not both")
    graph: GraphOperations
    if settings.endpoint:
        graph = SparqlEndpoint(
            settings.endpoint,
            profile=settings.profile,
            timeout=settings.timeout,
            retries=settings.retries,
            backoff=settings.backoff,
            max_retry_wait=settings.max_retry_wait,
            user_agent=settings.user_agent,
            auth=EndpointAuth.resolve(
                user=settings.endpoint_user,
                password=settings.endpoint_password,
                token=settings.endpoint_token,
                headers=settings.endpoint_headers,
            ),
        )
    elif settings.store:
        graph = LocalStore(
            settings.store,
            profile=settings.profile,
            read_only=read_only,
            timeout=settings.timeout,
            progress=settings.progress,
            wait=settings.store_lock_wait,
            caps=LoadCaps.from_settings(settings),
            executors=ExecutorLimits.from_settings(settings),
        )
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

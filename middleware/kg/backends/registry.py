"""The kinds of source a setting can name, and how each opens: a new backend is its own
module plus one ``Backend`` in ``BACKENDS``.

>>> from middleware.config import Settings
>>> [b.name for b in BACKENDS if b.chosen(Settings.build({"store": "/data/films"}))]
['store']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from middleware.config import Settings
from middleware.errors import BadRequest
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.endpoint_auth import EndpointAuth
from middleware.kg.backends.local import LocalStore
from middleware.kg.executors.limits import ExecutorLimits
from middleware.kg.load_guard import LoadCaps
from middleware.kg.operations import GraphOperations


@dataclass(frozen=True)
class Backend:
    """A kind of source: the flag that names it, whether settings choose it, how it opens."""

    name: str
    flag: str  # how a user names it, for errors (``--store``)
    chosen: Callable[[Settings], bool]
    open: Callable[[Settings, bool], GraphOperations]  # (settings, read_only)


def open_endpoint(settings: Settings, read_only: bool) -> GraphOperations:
    """A SPARQL endpoint (always read-only: the middleware never writes to one)."""
    if not settings.endpoint:
        raise BadRequest("no endpoint URL given", hint="set endpoint, or pass --endpoint URL")
    return SparqlEndpoint(
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


def open_store(settings: Settings, read_only: bool) -> GraphOperations:
    """A store folder that ``kgmw load`` made (or a plain Oxigraph database)."""
    return LocalStore(
        settings.store,
        profile=settings.profile,
        read_only=read_only,
        timeout=settings.timeout,
        progress=settings.progress,
        wait=settings.store_lock_wait,
        caps=LoadCaps.from_settings(settings),
        executors=ExecutorLimits.from_settings(settings),
    )


BACKENDS: tuple[Backend, ...] = (
    Backend("store", "--store", lambda s: bool(s.store), open_store),
    Backend("endpoint", "--endpoint", lambda s: bool(s.endpoint), open_endpoint),
)

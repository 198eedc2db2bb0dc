"""The ``/sparql`` fast path: a plain query GET answered without Flask's request machinery.

Flask's request context, routing, hooks and response object cost about 0.25 ms a
request, more than a 1-hop query. ``SparqlFastPath`` sits in front of the Flask app
(``app.wsgi_app``) and answers the common request itself: ``GET /sparql`` with one
``query`` and at most one ``source`` and ``format``, no body, no CORS ``Origin``.
It goes through the same steps as the route: ``Admission.admit`` (keys, failed
authentications, rate limit, penalty box), then ``sparql_proxy.answer`` (key grant,
guard on the canonical text that runs, executors, metrics). An error is handed to the
app's own error handler and ``after_request`` hooks, so it is rendered and counted as
on the route. Served by ``plain_get``, it lets the query executor send the response
itself (``direct_reply``). Every other request (``POST``, dataset parameters, ``update=``, repeated
parameters, ``HEAD``, a prefix mount) goes to the Flask app unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl

import werkzeug.urls  # noqa: F401  # registers the "werkzeug.url_quote" codec error handler
from flask import Flask, g
from werkzeug.http import HTTP_STATUS_CODES
from werkzeug.sansio.utils import get_host

from middleware.kg.sparql_guard import QueryDataset
from middleware.server.admission import Admission
from middleware.server.metrics import Metrics
from middleware.server.proxy.direct_reply import ENVIRON_KEY as DIRECT
from middleware.server.proxy.direct_reply import DirectReply
from middleware.server.proxy.sparql_proxy import answer, client_socket, service_url
from middleware.server.state import ServiceState

_PARAMETERS = frozenset(("query", "source", "format"))
_PARSED = "kgmw.sparql_args"  # set by the server alone: no request header maps to it
_NO_DATASET = QueryDataset()
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class SparqlFastPath:
    """WSGI middleware: plain ``/sparql`` GETs answered here, the rest by ``inner``."""

    def __init__(
        self,
        app: Flask,
        inner: WSGIApp,
        admission: Admission,
        app_state: ServiceState,
        counts: Metrics,
    ) -> None:
        self.app = app
        self.inner = inner
        self.admission = admission
        self.state = app_state
        self.counts = counts

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        args = plain_query(environ)
        if args is None:
            return self.inner(environ, start_response)
        started = time.perf_counter()
        direct = environ.get(DIRECT)
        if not isinstance(direct, DirectReply):
            direct = None
        try:
            admitted = self.admission.admit(
                environ.get("REMOTE_ADDR"), environ.get("HTTP_AUTHORIZATION"), sparql=True
            )
            scheme = environ.get("wsgi.url_scheme", "http")
            host = get_host(scheme, environ.get("HTTP_HOST"), _server(environ))
            reply = answer(
                self.state,
                self.counts,
                text=args["query"],
                dataset=_NO_DATASET,
                source=args.get("source") or None,
                grant=admitted.grant,
                caller=admitted.caller,
                service_url=service_url(scheme, host, "", "/sparql"),
                asked=args.get("format") or "",
                accept=environ.get("HTTP_ACCEPT", ""),
                client=client_socket(environ),
                direct=direct,
            )
        except Exception as err:  # rendered, logged and counted by the app's handler
            return self._error(err, started, environ, start_response)
        self.counts.count_sparql_get(time.perf_counter() - started)
        if reply.written and direct is not None:  # the rest of what the executor sent
            start_response(f"200 {HTTP_STATUS_CODES[200]}", direct.headers)
            return [reply.body]
        start_response(
            f"200 {HTTP_STATUS_CODES[200]}",
            [
                ("Content-Type", reply.content_type),
                ("Content-Length", str(len(reply.body))),
                *reply.headers,
            ],
        )
        return [reply.body]

    def _error(
        self,
        err: Exception,
        started: float,
        environ: dict[str, Any],
        start_response: Callable[..., Any],
    ) -> Any:
        with self.app.request_context(environ):
            g.started = started
            response = self.app.finalize_request(
                self.app.handle_user_exception(err), from_error_handler=True
            )
            return response(environ, start_response)


def plain_query(environ: dict[str, Any]) -> dict[str, str] | None:
    """The parameters of a request the fast path answers, None for any other: a
    ``GET /sparql`` at the root, without body or ``Origin``, with one non-blank
    ``query`` and at most one ``source`` and one ``format``. Remembered in the environ,
    so the HTTP server's check and the fast path's parse the query string once."""
    known = environ.get(_PARSED)
    if isinstance(known, dict):
        return known
    if (
        environ.get("REQUEST_METHOD") != "GET"
        or environ.get("PATH_INFO") != "/sparql"
        or environ.get("SCRIPT_NAME")
        or environ.get("HTTP_ORIGIN")
        or environ.get("CONTENT_LENGTH", "0") not in ("", "0")
        or environ.get("CONTENT_TYPE")
        or "HTTP_TRANSFER_ENCODING" in environ
    ):
        return None
    try:  # as Werkzeug parses request.args
        pairs = parse_qsl(
            environ.get("QUERY_STRING", "").encode("latin-1").decode(),
            keep_blank_values=True,
            errors="werkzeug.url_quote",
        )
    except UnicodeError:
        return None
    args = dict(pairs)
    if len(args) != len(pairs) or not args.keys() <= _PARAMETERS:
        return None
    if not args.get("query", "").strip():
        return None
    environ[_PARSED] = args
    return args


def _server(environ: dict[str, Any]) -> tuple[str, int | None] | None:
    """``(SERVER_NAME, SERVER_PORT)``, as Werkzeug reads them for ``request.host``."""
    name = environ.get("SERVER_NAME")
    if name is None:
        return None
    try:
        return name, int(environ.get("SERVER_PORT", ""))
    except ValueError:
        return name, None

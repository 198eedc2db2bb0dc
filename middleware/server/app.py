"""The Flask app factory: routes, the error handler, keys, limits, CORS and metrics.

>>> from middleware.kg.backends.local import LocalStore
>>> from middleware.llm.scripted import ScriptedLLM
>>> app = create_app(llm=ScriptedLLM(default="Paris"), graphs={"demo": LocalStore()})
>>> app.test_client().get("/healthz").get_json()
{'status': 'ok'}
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping

from flask import Flask, Response, g, request
from flask_cors import CORS
from werkzeug.exceptions import RequestEntityTooLarge

from middleware.config import Settings
from middleware.errors import PayloadTooLarge
from middleware.kg.executors.probe import isolation_line
from middleware.kg.operations import GraphOperations
from middleware.llm.base import LLM
from middleware.server import status
from middleware.server.admission import Admission
from middleware.server.answering import answers, chat
from middleware.server.connections.address_gate import AddressGate
from middleware.server.context import METRICS_KEY, STATE_KEY
from middleware.server.errors import log, register_error_handlers
from middleware.server.json_body import BoundedJSONProvider
from middleware.server.metrics import Metrics
from middleware.server.proxy import sparql_proxy
from middleware.server.proxy.sparql_fast import SparqlFastPath
from middleware.server.state import ServiceState

# Routes anyone may call: probes, the description, and the page (its requests need a key).
OPEN_ENDPOINTS = {
    "status.healthz",
    "status.readyz",
    "status.openapi",
    "status.page",
    "status.static_file",
}


def create_app(
    settings: Settings | None = None,
    *,
    llm: LLM | None = None,
    graphs: Mapping[str, GraphOperations] | None = None,
    gate: AddressGate | None = None,
) -> Flask:
    """The service for ``settings`` (default: resolved from config file and environment).

    ``llm`` and ``graphs`` replace what the settings would open; the first graph named
    is the default source. ``gate`` is the table of addresses the server refuses at the
    connection (one shared by gunicorn's workers; by default the app's own).
    """
    settings = settings or Settings.load()
    _log_isolation()
    app = Flask("middleware.server", static_folder=None)  # static/ is served by status.py
    app.json = provider = BoundedJSONProvider(app)  # every get_json: nesting bounded
    provider.sort_keys = False
    provider.ensure_ascii = False
    provider.max_depth = settings.server_max_json_depth
    app.config["MAX_CONTENT_LENGTH"] = settings.server_max_body
    app.config[STATE_KEY] = ServiceState(settings, llm=llm, graphs=graphs, gate=gate)
    app.config[METRICS_KEY] = metrics = Metrics()
    for blueprint in (answers.blueprint, chat.blueprint, sparql_proxy.blueprint, status.blueprint):
        app.register_blueprint(blueprint)
    register_error_handlers(app, lambda err: metrics.count_error(type(err).__name__))
    admission = _install_guards(app, settings, metrics)
    app.wsgi_app = SparqlFastPath(  # type: ignore[method-assign]
        app, app.wsgi_app, admission, app.config[STATE_KEY], metrics
    )
    return app


@functools.cache
def _log_isolation() -> None:
    """One line per process: how caller SPARQL is kept off the network here."""
    isolated, line = isolation_line()
    (log.info if isolated else log.warning)("kgmw: %s", line)


def _check_body_size(max_body: int) -> None:
    """PayloadTooLarge for a body over ``max_body`` bytes, declared or streamed (chunked)."""
    size = request.content_length
    if size is None and request.method in ("POST", "PUT", "PATCH"):
        # a chunked body: read it (the stream stops at the limit) and see if more follows
        size = len(request.get_data(cache=True))
        if size >= max_body:
            try:
                more = request.stream.read(1)
            except RequestEntityTooLarge:
                more = b"?"
            size += len(more)
    if size is not None and size > max_body:
        declared = request.content_length is not None
        raise PayloadTooLarge(
            f"the request body has {size} bytes, more than {max_body}"
            if declared
            else f"the streamed request body is longer than {max_body} bytes",
            hint="send less, or raise server_max_body",
        )


def _install_guards(app: Flask, settings: Settings, metrics: Metrics) -> Admission:
    """The hooks before and after every Flask request: body size, keys and limits
    (the ``Admission`` returned, which the fast path asks too), CORS (Flask-CORS, for
    the origins of ``server_cors_origins``), and the request's figures."""
    max_body = settings.server_max_body

    @app.before_request
    def guard() -> Response | None:
        g.started = time.perf_counter()
        if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
            return Response(status=204)  # a CORS preflight: Flask-CORS adds what is allowed
        _check_body_size(max_body)
        if request.endpoint in OPEN_ENDPOINTS:
            return None
        admitted = admission.admit(
            request.remote_addr,
            request.headers.get("Authorization"),
            sparql=request.endpoint == "sparql.sparql",
        )
        g.caller = admitted.caller  # who the /sparql penalty box sees
        g.grant = admitted.grant  # what a [keys.NAME] key may use; None: everything
        return None

    # after guard: Flask-Limiter's hook (it declares no limits) runs after the caller is known
    admission = Admission(app, settings, app.config[STATE_KEY])
    origins = [o.strip() for o in (settings.server_cors_origins or "").split(",") if o.strip()]
    if origins:
        CORS(
            app,
            origins=origins,
            allow_headers=["Authorization", "Content-Type"],
            methods=["GET", "POST", "OPTIONS"],
            send_wildcard="*" in origins,
            vary_header=True,
        )

    @app.after_request
    def finish(response: Response) -> Response:
        route = request.url_rule.rule if request.url_rule is not None else "unmatched"
        started = getattr(g, "started", time.perf_counter())
        metrics.count_request(
            route, request.method, response.status_code, time.perf_counter() - started
        )
        return response

    return admission

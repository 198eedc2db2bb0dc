"""Routes about the service itself: sources, health, readiness, metrics, OpenAPI, the page."""

from __future__ import annotations

import threading
import time
from importlib import resources
from typing import Any

from flask import Blueprint, Response, jsonify, request

from middleware.errors import NotFound
from middleware.llm.base import user
from middleware.llm.cache import CachedLLM
from middleware.server.context import grant, metrics, state
from middleware.server.metrics import CONTENT_TYPE
from middleware.server.openapi import openapi_document
from middleware.server.page_files import PAGE_FILES, PAGE_POLICY, PAGE_TYPES

blueprint = Blueprint("status", __name__)
READY_CACHE_SECONDS = 10.0
READY_TIMEOUT = 5.0
_ready_lock = threading.Lock()
_ready_memo: dict[int, tuple[float, dict[str, Any]]] = {}


@blueprint.get("/v1/sources")
def sources() -> Response:
    app_state = state()
    allowed = grant()
    names = [
        n
        for n in app_state.source_names()
        if allowed is None or allowed.sources is None or n in allowed.sources
    ]  # a [keys.NAME] key sees its own sources only
    default = app_state.default_source
    described = []
    for name in names:
        body = app_state.describe_source(name)
        memory = app_state.plan_memory(name)
        if memory is not None:  # every host behind one balancer should show the same
            body["plan_memory"] = memory
        described.append(body)
    return jsonify({"default": default if default in names else None, "sources": described})


@blueprint.get("/healthz")
def healthz() -> Response:
    """The process is up and serving; touches nothing else."""
    return jsonify({"status": "ok"})


@blueprint.get("/readyz")
def readyz() -> Response:
    """Every source answers a query, the LLM answers a prompt and the shared Redis (if
    any) a ping (checked at most every 10 s; the last result is reused in between)."""
    app_state = state()
    key = id(app_state)
    with _ready_lock:
        memo = _ready_memo.get(key)
        if memo is None or time.monotonic() - memo[0] > READY_CACHE_SECONDS:
            memo = (time.monotonic(), _readiness())
            _ready_memo[key] = memo
    body = memo[1]
    response = jsonify(body)
    response.status_code = 200 if body["ready"] else 503
    return response


def _readiness() -> dict[str, Any]:
    app_state = state()
    checks: dict[str, dict[str, Any]] = {}
    for name in app_state.source_names():
        checks[f"source:{name}"] = _probe(
            lambda name=name: app_state.graph(name).has_triples(timeout=READY_TIMEOUT)
        )
    llm = app_state.llm
    raw = llm.inner if isinstance(llm, CachedLLM) else llm  # the model itself must answer
    checks["llm"] = _probe(lambda: raw.complete([user("Ready?")], max_tokens=1).text is not None)
    if app_state.shared is not None:  # server_state_url: limits and kept answers need it
        checks["shared_state"] = _probe(app_state.shared.ping)
    return {"ready": all(c["ok"] for c in checks.values()), "checks": checks}


def _probe(action: Any) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        action()
    except Exception as err:  # a readiness probe reports any failure, it never raises
        return {"ok": False, "error": f"{type(err).__name__}: {err}"}
    return {"ok": True, "seconds": round(time.perf_counter() - started, 4)}


@blueprint.get("/metrics")
def prometheus() -> Response:
    return Response(metrics().render(), content_type=CONTENT_TYPE)


@blueprint.get("/openapi.json")
def openapi() -> Response:
    return jsonify(openapi_document())


@blueprint.get("/")
def page() -> Response:
    """The question page (served by the app itself; no external assets)."""
    return _static("index.html")


@blueprint.get("/static/<path:name>")
def static_file(name: str) -> Response:
    """The page's script, style and vendored library; any other name is a 404."""
    if name not in PAGE_FILES:
        raise NotFound(f"no page file {name!r}", hint="the page's files: " + ", ".join(PAGE_FILES))
    return _static(name)


def _static(name: str) -> Response:
    data = resources.files("middleware.server").joinpath("static", *name.split("/")).read_bytes()
    response = Response(data, content_type=PAGE_TYPES[name.rsplit(".", 1)[-1]])
    response.headers["Content-Security-Policy"] = PAGE_POLICY
    response.add_etag()  # a browser that has the file gets 304, not 435 kB again
    response.make_conditional(request)  # in place
    return response

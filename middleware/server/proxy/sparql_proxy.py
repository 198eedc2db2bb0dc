"""``/sparql``: the SPARQL 1.1 Protocol, read-only, in front of the configured sources.

A query arrives as ``GET ?query=``, a form ``POST`` or a ``application/sparql-query``
body (UTF-8; exactly one query), with the dataset in ``default-graph-uri`` and
``named-graph-uri``. ``middleware.kg.sparql_guard`` checks it on the canonical text that
runs: updates are refused, and so is every ``SERVICE`` clause whose endpoint is not on
``sparql_service_allowlist``, so the proxy cannot be used to reach hosts behind it.
Relative IRIs resolve against ``sparql_base_iri`` (default: this URL). Results are
capped at ``sparql_max_rows`` and written in the format the ``Accept`` header (or
``?format=``) asks for; 406 when it allows none.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from flask import Blueprint, Response, g, request
from werkzeug.datastructures import MIMEAccept
from werkzeug.http import parse_accept_header
from werkzeug.sansio.utils import get_current_url

from middleware.config.key_grants import KeyGrant
from middleware.errors import (
    BadRequest,
    NotAcceptable,
    PayloadTooLarge,
    QueryTooComplex,
    ReadOnlyViolation,
    UnsupportedMediaType,
)
from middleware.kg.executors.delivery import Delivery, Written
from middleware.kg.executors.pool import Sent
from middleware.kg.open import query_policy
from middleware.kg.sparql_guard import QueryDataset, guard_query, with_base
from middleware.serialize.sparql_results import ALIASES, formats_for, write_result
from middleware.serialize.written_results import write_query
from middleware.server.context import grant, metrics, state
from middleware.server.guard import permit
from middleware.server.metrics import Metrics
from middleware.server.proxy.direct_reply import DirectReply
from middleware.server.state import ServiceState
from middleware.support.tracing import span

blueprint = Blueprint("sparql", __name__)


@dataclass(frozen=True)
class SparqlReply:
    """A query's answer: the body in the negotiated format, its type, extra headers."""

    body: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...]
    written: bool = False  # sent by the executor; ``body`` is what it left unsent


@blueprint.route("/sparql", methods=["GET", "POST"])
def sparql() -> Response:
    """Run a read-only query on ``?source=`` (default source when absent)."""
    text, dataset = _protocol_request()
    reply = answer(
        state(),
        metrics(),
        text=text,
        dataset=dataset,
        source=request.args.get("source") or request.form.get("source") or None,
        grant=grant(),
        caller=g.get("caller", ""),
        service_url=service_url(request.scheme, request.host, request.root_path, request.path),
        asked=request.args.get("format") or request.form.get("format") or "",
        accept=request.headers.get("Accept", ""),
        client=client_socket(request.environ),
    )
    response = Response(reply.body, content_type=reply.content_type)
    response.headers.extend(reply.headers)
    return response


def answer(
    app_state: ServiceState,
    counts: Metrics,
    *,
    text: str,
    dataset: QueryDataset,
    source: str | None,
    grant: KeyGrant | None,
    caller: str,
    service_url: str,
    asked: str,
    accept: str,
    client: socket.socket | None,
    direct: DirectReply | None = None,
) -> SparqlReply:
    """Check and run ``text`` for ``caller`` (whose key may use ``grant``) on ``source``;
    the result in the format ``asked`` (``?format=``), else the best for ``accept``.
    The Flask route and the fast path (``sparql_fast``) both answer through here; the
    fast path may offer the connection for the executor to answer on (``direct``)."""
    permit(grant, sources=[source or app_state.default_source])
    graph = app_state.graph(source)
    settings = app_state.settings
    base_iri = settings.sparql_base_iri or service_url
    try:
        guarded = guard_query(with_base(text, base_iri), query_policy(settings))
    except (QueryTooComplex, PayloadTooLarge):
        app_state.penalties.strike(caller)  # the crash corpus's shapes
        raise
    dataset.check()
    kind: str = "graph" if guarded.kind in ("construct", "describe") else guarded.kind
    fmt = format_for(kind, asked, accept)
    headers = [("X-Kgmw-Source", graph.name)]
    cut = ("X-Kgmw-Truncated", f"cut at {settings.sparql_max_rows} rows")
    pool = app_state.query_pool(source)
    if pool is not None:
        delivery = None
        if direct is not None and client is not None:
            head = direct.head(f"{formats_for(kind)[fmt]}; charset=utf-8", headers)
            delivery = Delivery(client, head, f"{cut[0]}: {cut[1]}\r\n".encode())
        timeout = settings.timeout
        with span("kgmw.sparql", source=graph.name, kind="query", executor=True):
            ran = pool.run(
                write_query,
                guarded.text,
                (
                    fmt,
                    timeout,
                    settings.sparql_max_rows,
                    dataset or None,
                    settings.sparql_max_result_mb << 20,
                ),
                timeout=timeout,
                client=caller,
                caller=client,
                delivery=delivery,
                penalties=app_state.penalties,
            )
        if isinstance(ran, Sent) and direct is not None:
            counts.count_proxy_query(graph.name)
            direct.written, direct.size = True, ran.size
            if ran.truncated:
                direct.headers.append(cut)
            return SparqlReply(ran.unsent, direct.headers[0][1], (), written=True)
        assert isinstance(ran, Written)
        body, kind, truncated = ran.body, ran.kind, ran.truncated
    else:
        result = graph.query(
            text,
            timeout=settings.timeout,
            max_rows=settings.sparql_max_rows,
            policy=query_policy(settings),
            dataset=dataset,
            base_iri=base_iri,
        )
        body, kind, truncated = write_result(result, fmt), result.kind, result.truncated
    counts.count_proxy_query(graph.name)
    if truncated:
        headers.append(cut)
    return SparqlReply(body, f"{formats_for(kind)[fmt]}; charset=utf-8", tuple(headers))


def client_socket(environ: Mapping[str, Any]) -> socket.socket | None:
    """The caller's connection, watched for a close while its query runs (the
    development server and gunicorn both put it in the WSGI environ)."""
    for key in ("werkzeug.socket", "gunicorn.socket"):
        found = environ.get(key)
        if isinstance(found, socket.socket):
            return found
    return None


def _protocol_request() -> tuple[str, QueryDataset]:
    """The one query of the request and the dataset it names (SPARQL 1.1 Protocol §2.1).
    A HEAD is read as the GET it stands for (Werkzeug leaves its body out)."""
    if request.method in ("GET", "HEAD"):
        if "update" in request.args:
            raise _update_refused()
        queries = request.args.getlist("query")
    else:
        mimetype = request.mimetype
        if mimetype == "application/sparql-update" or "update" in request.values:
            raise _update_refused()
        charset = (request.mimetype_params.get("charset") or "utf-8").lower()
        if charset not in ("utf-8", "utf8"):
            raise UnsupportedMediaType(
                f"a body in charset {charset}",
                hint="send the query as UTF-8 (charset=utf-8)",
            )
        if mimetype == "application/sparql-query":
            if "query" in request.args:
                raise BadRequest(
                    "a query both in the URL and in the body",
                    hint="send it once: in the body, or as ?query= with GET",
                )
            queries = [_utf8(request.get_data())]
        elif mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            queries = request.form.getlist("query") + request.args.getlist("query")
        else:
            raise BadRequest(
                f"a POST to /sparql with Content-Type {mimetype or 'none'!r}",
                hint="send application/sparql-query or a form with a 'query' field",
            )
    if len(queries) > 1:
        raise BadRequest(
            f"{len(queries)} query parameters in one request",
            hint="the SPARQL Protocol takes exactly one query per request",
        )
    if not queries or not queries[0].strip():
        raise BadRequest("no query given", hint="pass the SPARQL text as 'query'")
    dataset = QueryDataset(
        tuple(request.values.getlist("default-graph-uri")),
        tuple(request.values.getlist("named-graph-uri")),
    )
    return queries[0], dataset


def _utf8(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadRequest(
            f"the body is not valid UTF-8 (byte {err.start})", hint="send the query as UTF-8"
        ) from None


def _update_refused() -> ReadOnlyViolation:
    return ReadOnlyViolation(
        "SPARQL updates are not allowed here: this proxy is read-only",
        hint="send a SELECT, ASK, CONSTRUCT or DESCRIBE query",
    )


@lru_cache(maxsize=64)
def service_url(scheme: str, host: str, root: str, path: str) -> str:
    """This endpoint's URL (``request.base_url``, remembered: it costs 0.07 ms a call)."""
    return get_current_url(scheme, host, root, path)


@lru_cache(maxsize=256)
def format_for(kind: str, asked: str, accept: str) -> str:
    """The format named by ``asked`` (``?format=``), else the best match for ``accept``."""
    offered = formats_for(kind)
    if asked:
        name = "rdfxml" if kind == "graph" and asked == "xml" else ALIASES.get(asked, asked)
        name = next((k for k, v in offered.items() if v == name), name)
        if name not in offered:
            raise BadRequest(
                f"format {asked!r} is not available for a {kind} result",
                hint=f"use one of {', '.join(offered)}",
            )
        return name
    by_type = {media: name for name, media in offered.items()}
    by_type.update({a: n for a, n in ALIASES.items() if n in offered})
    accepted = parse_accept_header(accept, MIMEAccept)
    if not accepted:
        return next(iter(offered))
    best = accepted.best_match(list(by_type))
    if best is None:
        raise NotAcceptable(
            f"no format of a {kind} result matches Accept: {accept[:200]}",
            hint=f"accept one of {', '.join(sorted(set(offered.values())))}",
        )
    return by_type[best]

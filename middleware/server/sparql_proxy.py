"""``/sparql``: the SPARQL 1.1 Protocol, read-only, in front of the configured sources.

A query arrives as ``GET ?query=``, a form ``POST`` or a ``application/sparql-query``
body. It is parsed (never matched by pattern): updates are refused, and so is every
``SERVICE`` clause whose endpoint is not on ``sparql_service_allowlist``, so the proxy
cannot be used to reach hosts behind it. Results are capped at ``sparql_max_rows`` and
written in the format the ``Accept`` header (or ``?format=``) asks for.
"""

from __future__ import annotations

from flask import Blueprint, Response, request

from middleware.errors import BadRequest, ReadOnlyViolation
from middleware.kg.open import query_policy
from middleware.serialize.sparql_results import ALIASES, formats_for, write_result
from middleware.server.context import metrics, state

blueprint = Blueprint("sparql", __name__)


@blueprint.route("/sparql", methods=["GET", "POST"])
def sparql() -> Response:
    """Run a read-only query on ``?source=`` (default source when absent)."""
    text = _query_text()
    source = request.args.get("source") or request.form.get("source") or None
    app_state = state()
    graph = app_state.graph(source)
    settings = app_state.settings
    result = graph.query(
        text,
        timeout=settings.timeout,
        max_rows=settings.sparql_max_rows,
        policy=query_policy(settings),
    )
    metrics().count_proxy_query(graph.name)
    fmt = _negotiate(result.kind)
    body = write_result(result, fmt)
    response = Response(body, content_type=f"{formats_for(result.kind)[fmt]}; charset=utf-8")
    response.headers["X-Kgmw-Source"] = graph.name
    if result.truncated:
        response.headers["X-Kgmw-Truncated"] = f"cut at {app_state.settings.sparql_max_rows} rows"
    return response


def _query_text() -> str:
    if request.method == "GET":
        if "update" in request.args:
            raise _update_refused()
        query = request.args.get("query")
    else:
        mimetype = request.mimetype
        if mimetype == "application/sparql-update" or "update" in request.form:
            raise _update_refused()
        if mimetype == "application/sparql-query":
            query = request.get_data(as_text=True)
        elif mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            query = request.form.get("query")
        else:
            raise BadRequest(
                f"a POST to /sparql with Content-Type {mimetype or 'none'!r}",
                hint="send application/sparql-query or a form with a 'query' field",
            )
    if any(request.values.getlist(n) for n in ("default-graph-uri", "named-graph-uri")):
        raise BadRequest(
            "default-graph-uri and named-graph-uri are not supported by this proxy",
            hint="name graphs in the query with FROM or GRAPH",
        )
    if not query or not query.strip():
        raise BadRequest("no query given", hint="pass the SPARQL text as 'query'")
    return query


def _update_refused() -> ReadOnlyViolation:
    return ReadOnlyViolation(
        "SPARQL updates are not allowed here: this proxy is read-only",
        hint="send a SELECT, ASK, CONSTRUCT or DESCRIBE query",
    )


def _negotiate(kind: str) -> str:
    """The format for a ``kind`` result: ``?format=``, else the best Accept match."""
    offered = formats_for(kind)
    asked = request.args.get("format") or request.form.get("format")
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
    best = request.accept_mimetypes.best_match(list(by_type))
    return by_type[best] if best else next(iter(offered))

"""The /sparql fast path: plain GETs skip Flask's machinery, answered and refused as on
the route; every other request goes to the Flask app."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from flask import Flask

from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from middleware.server.context import STATE_KEY
from middleware.server.proxy.sparql_fast import plain_query
from tests.server.conftest import settings
from tests.server.prometheus_text import figure

TITANIC = "https://kgmw.dev/metaqa/entity/Titanic"
SELECT = f"SELECT ?p ?o WHERE {{ <{TITANIC}> ?p ?o }}"


def _environ(query_string: str, **extra: str) -> dict[str, Any]:
    return {"REQUEST_METHOD": "GET", "PATH_INFO": "/sparql", "QUERY_STRING": query_string, **extra}


def test_only_a_plain_get_with_one_query_takes_the_fast_path() -> None:
    plain = urlencode({"query": SELECT, "source": "s", "format": "json"})
    assert plain_query(_environ(plain)) == {"query": SELECT, "source": "s", "format": "json"}
    for query_string, extra in [
        (urlencode({"query": SELECT}), {"REQUEST_METHOD": "POST"}),
        (urlencode({"query": SELECT}), {"REQUEST_METHOD": "HEAD"}),
        (urlencode({"query": SELECT}), {"PATH_INFO": "/sparql/"}),
        (urlencode({"query": SELECT}), {"SCRIPT_NAME": "/mounted"}),
        (urlencode({"query": SELECT}), {"HTTP_ORIGIN": "https://example.org"}),
        (urlencode({"query": SELECT}), {"CONTENT_LENGTH": "5"}),
        (urlencode({"query": SELECT}), {"HTTP_TRANSFER_ENCODING": "chunked"}),
        (urlencode({"query": SELECT, "update": "CLEAR ALL"}), {}),
        (urlencode({"query": SELECT, "default-graph-uri": "http://g"}), {}),
        (urlencode([("query", SELECT), ("query", "ASK {}")]), {}),
        (urlencode([("query", SELECT), ("format", "json"), ("format", "xml")]), {}),
        (urlencode({"query": "  "}), {}),
        ("query=\xc3", {}),  # a raw byte that is not UTF-8: the route decides
        ("", {}),
    ]:
        assert plain_query(_environ(query_string, **extra)) is None, (query_string, extra)


@pytest.fixture
def app(sample_graph: LocalStore) -> Iterator[Flask]:
    service = create_app(
        settings(server_api_keys="fast-key", sparql_penalty=60),
        llm=None,
        graphs={"sample": sample_graph},
    )
    yield service
    service.config[STATE_KEY].close()


def _route_calls(app: Flask) -> list[str]:
    """The Flask endpoints the app dispatched to from now on."""
    calls: list[str] = []

    @app.before_request
    def seen() -> None:
        from flask import request

        calls.append(str(request.endpoint))

    return calls


KEY = {"Authorization": "Bearer fast-key"}


def test_a_plain_get_is_answered_as_the_route_answers_it(app: Flask) -> None:
    client = app.test_client()
    calls = _route_calls(app)
    fast = client.get("/sparql", query_string={"query": SELECT}, headers=KEY)
    assert calls == []  # not through Flask
    routed = client.get("/sparql", query_string={"query": SELECT, "x": "1"}, headers=KEY)
    assert calls == ["sparql.sparql"]
    assert fast.status_code == routed.status_code == 200
    assert fast.data == routed.data and b"bindings" in fast.data
    for header in ("Content-Type", "Content-Length", "X-Kgmw-Source"):
        assert fast.headers[header] == routed.headers[header]


@pytest.mark.parametrize(
    ("query", "headers", "status"),
    [
        (SELECT, {}, 401),
        (SELECT, {"Authorization": "Bearer wrong"}, 401),
        ("SELECT ?x WHERE { ?x ?p", KEY, 400),
        ("INSERT DATA { <a:a> <a:b> <a:c> }", KEY, 400),
        ("SELECT * WHERE { SERVICE <http://10.0.0.1/sparql> { ?s ?p ?o } }", KEY, 400),
    ],
    ids=["no key", "wrong key", "syntax", "update", "service"],
)
def test_a_refusal_on_the_fast_path_is_the_routes_refusal(
    app: Flask, query: str, headers: dict[str, str], status: int
) -> None:
    client = app.test_client()
    calls = _route_calls(app)
    fast = client.get("/sparql", query_string={"query": query}, headers=headers)
    routed = client.get("/sparql", query_string={"query": query, "x": "1"}, headers=headers)
    assert len(calls) <= 1  # the second only (a 401 stops in the hooks)
    assert fast.status_code == routed.status_code == status
    assert fast.get_json() == routed.get_json()
    assert fast.headers.get("WWW-Authenticate") == routed.headers.get("WWW-Authenticate")


def test_the_fast_path_strikes_boxes_and_counts_as_the_route_does(app: Flask) -> None:
    client = app.test_client()
    deep = "SELECT * WHERE " + "{" * 100 + " ?s ?p ?o " + "}" * 100
    statuses = [
        client.get("/sparql", query_string={"query": deep}, headers=KEY).status_code
        for _ in range(5)
    ]
    assert statuses[:4] == [400] * 4 and statuses[4] == 429  # past three strikes: the box
    boxed = client.get("/sparql", query_string={"query": SELECT}, headers=KEY)
    assert boxed.status_code == 429 and int(boxed.headers["Retry-After"]) > 0
    metrics = client.get("/metrics", headers=KEY).get_data(as_text=True)
    requests = "kgmw_http_requests_total"
    assert figure(metrics, requests, route="/sparql", method="GET", status="400") == 4
    assert figure(metrics, requests, route="/sparql", method="GET", status="429") == 2

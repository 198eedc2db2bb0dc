"""A query the engine refuses to run is the caller's error (400), on both paths a /sparql
query takes: in the service process (an in-memory store) and in an executor process
(an on-disk store). A storage failure stays the service's (502)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from flask import Flask

from middleware.errors import BadRequest, EndpointError
from middleware.kg.backends.local import LocalStore
from middleware.kg.engine_errors import engine_error
from middleware.server import create_app
from tests.server.conftest import LiveServer, settings

REFUSED = {
    "unknown function": "SELECT (<http://example/function>(1) AS ?f) {}",
    "cast arity": "SELECT (<http://www.w3.org/2001/XMLSchema#integer>(1, 2) AS ?f) {}",
    "function in a filter": "SELECT ?x { VALUES ?x { 1 } FILTER(<http://example/f>(?x)) }",
    "function in ORDER BY": "SELECT ?x { VALUES ?x { 1 } } ORDER BY <http://example/f>(?x)",
}


def check_refusals(server: LiveServer) -> None:
    url = f"{server.url}/sparql"
    for name, query in REFUSED.items():
        for response in (
            httpx.get(url, params={"query": query}, timeout=30),  # the fast path
            httpx.post(url, data={"query": query}, timeout=30),  # the Flask route
        ):
            assert response.status_code == 400, (name, response.status_code, response.text)
            body = response.json()
            assert body["message"].startswith("the engine cannot run this query: "), name
            assert "SPARQL 1.1" in body["hint"], name
    assert httpx.get(url, params={"query": "ASK {}"}).status_code == 200


def test_engine_refusals_in_the_service_process(serve: Callable[[Flask], LiveServer]) -> None:
    check_refusals(serve(create_app(settings(), graphs={"memory": LocalStore()})))


def test_engine_refusals_in_an_executor(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    check_refusals(serve(create_app(settings(), graphs={"sample": sample_graph})))


def test_a_library_caller_gets_a_bad_request() -> None:
    with pytest.raises(BadRequest, match="the engine cannot run this query"):
        LocalStore().query(REFUSED["unknown function"])


@pytest.mark.parametrize(
    ("raised", "status"),
    [
        (RuntimeError("The custom function <http://e/f> is not supported"), 400),
        (
            RuntimeError(
                "The custom function <http://e/f> requires between 1 and 1 arguments, "
                "but 2 were given"
            ),
            400,
        ),
        (RuntimeError("The variable encoding the service name is unbound"), 400),
        (RuntimeError('"x" is not a valid service name'), 400),
        (RuntimeError("The service <http://e/s> is not supported"), 400),
        (SyntaxError("error at 1:1: expected SELECT"), 400),
        (OSError("No space left on device"), 502),
        (RuntimeError("Corruption: block checksum mismatch"), 502),
        (RuntimeError("The SPARQL operation has been cancelled"), 502),
        (ValueError("anything else the engine may raise"), 502),
    ],
)
def test_which_engine_errors_are_the_callers(raised: Exception, status: int) -> None:
    error = engine_error(raised, "store")
    assert error.status == status
    if status == 502:
        assert isinstance(error, EndpointError) and "'store'" in error.message

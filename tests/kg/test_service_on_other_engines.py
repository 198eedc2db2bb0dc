"""Where this process cannot take the network away, SERVICE is refused another way.

A remote endpoint makes the SERVICE call itself: without an allowlist, the word
``service`` in any case, anywhere but inside an IRI or a string, is refused (what the
text means decides nothing). An rdflib graph runs SERVICE in this process: the query
is parsed once by rdflib, every SERVICE in that parse must be allowed, and the same
parse runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import rdflib

import middleware.kg.sparql_guard as sparql_guard
from middleware.errors import BadRequest
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.backends.rdflib_graph import RdflibGraph
from middleware.kg.remote_guard import refuse_extension_functions
from middleware.kg.sparql_guard import QueryPolicy
from tests.kg.test_sparql_guard import Listener, listener, settle
from tests.virtuoso_server import VirtuosoServer

__all__ = ["listener"]

REFUSED_ON_AN_ENDPOINT = [
    "SELECT * WHERE {{ SERVICESILENT<{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ sErViCe <{url}> {{ ?s ?p ?o }} }}",
    "PREFIX ex: <{url}> SELECT * WHERE {{ SERVICEex:c {{ ?s ?p ?o }} }}",
    "SELECT ?service WHERE {{ ?service ?p ?o }}",  # no reading decides: the letters do
]
LET_THROUGH = [
    'SELECT * WHERE { ?s ?p "customer service" }',
    "SELECT * WHERE { ?s <http://example.org/service> ?o }",
    "SELECT * WHERE { ?s ?p ?o } # service: comments are dropped, never sent",
]


@pytest.fixture
def remote(oxigraph_server: str) -> SparqlEndpoint:
    return SparqlEndpoint(oxigraph_server, profile="generic", name="oxigraph", timeout=10)


@pytest.mark.parametrize("query", REFUSED_ON_AN_ENDPOINT)
def test_an_endpoint_refuses_the_word_outside_iris_and_strings(
    remote: SparqlEndpoint, listener: Listener, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(BadRequest, match="SERVICE"):
        remote.query(query.format(url=listener.url))
    # the guard's own SERVICE check off (a test hook): the word check alone refuses
    monkeypatch.setattr(sparql_guard, "_services", lambda *_: ())
    with pytest.raises(BadRequest, match="SERVICE is not allowed on this source"):
        remote.query(query.format(url=listener.url))
    assert settle(listener) == 0


@pytest.mark.parametrize("query", LET_THROUGH)
def test_an_endpoint_runs_the_word_inside_iris_and_strings(
    remote: SparqlEndpoint, query: str
) -> None:
    assert remote.query(query).kind == "select"


def test_with_an_allowlist_an_endpoint_gets_the_allowed_service(remote: SparqlEndpoint) -> None:
    """The remote engine makes the call (here it fails: the target is not there)."""
    target = "http://127.0.0.1:9/sparql"
    with pytest.raises(Exception) as raised:
        remote.query(
            f"SELECT * WHERE {{ SERVICE <{target}> {{ ?s ?p ?o }} }}",
            policy=QueryPolicy(services=(target,)),
        )
    assert "SERVICE is not allowed" not in str(raised.value)


def test_rdflib_refuses_every_service_even_an_allowed_one(listener: Listener) -> None:
    """rdflib reads a SERVICE's endpoint again from the first SERVICE-shaped text of the
    query, a string literal's included: an allowed SERVICE beside such a string called
    the string's endpoint. So rdflib graphs never federate."""
    allowed = f"http://127.0.0.1:{listener.port}/allowed"
    bait = f'"SERVICE <http://127.0.0.2:{listener.port}/elsewhere> {{ ?s ?p ?o }}"'
    graph = RdflibGraph(rdflib.Dataset())
    with pytest.raises(BadRequest, match="rdflib would make the call itself"):
        graph.query(
            f"SELECT * WHERE {{ VALUES ?bait {{ {bait} }} SERVICE <{allowed}> {{ ?s ?p ?o }} }}",
            policy=QueryPolicy(services=(allowed,)),
        )
    assert settle(listener) == 0


def test_rdflib_refuses_a_service_in_its_own_parse(listener: Listener) -> None:
    graph = RdflibGraph(rdflib.Graph())
    for query in (
        f"SELECT * WHERE {{ SERVICE <{listener.url}> {{ ?s ?p ?o }} }}",
        f"PREFIX e: <http://127.0.0.1:{listener.port}/> SELECT * {{ OPTIONAL {{ SERVICE e:x {{ ?s ?p ?o }} }} }}",
        "SELECT * WHERE { VALUES ?v { <http://127.0.0.1:1/> } SERVICE ?v { ?s ?p ?o } }",
    ):
        with pytest.raises(BadRequest, match="not allowed"):
            graph.query(query, policy=QueryPolicy(services=(listener.url,)))
    assert settle(listener) == 0
    assert graph.query("SELECT * WHERE { ?s ?p ?o }").rows == []


def test_rdflib_refuses_from_and_from_named(listener: Listener, tmp_path: Path) -> None:
    """rdflib would fetch every FROM / FROM NAMED IRI itself: a listener, or a file."""
    secret = tmp_path / "private.nt"
    secret.write_text('<http://e/a> <http://e/p> "secret" .\n')
    dataset = rdflib.Dataset()
    dataset.parse(data="<http://e/a> <http://e/p> <http://e/b> .", format="nt")
    graph = RdflibGraph(dataset)
    for clause in (
        f"FROM <{listener.url}>",
        f"FROM NAMED <{listener.url}>",
        f"FROM <{secret.as_uri()}>",
    ):
        with pytest.raises(BadRequest, match="FROM"):
            graph.query(f"SELECT * {clause} WHERE {{ ?s ?p ?o }}")
    assert settle(listener) == 0
    assert len(graph.query("SELECT * WHERE { ?s ?p ?o }").rows) == 1


def test_where_executors_cannot_be_isolated_service_is_refused_by_its_letters(
    listener: Listener, tmp_path: Path
) -> None:
    """A machine without user namespaces (the test hook ``isolate=False`` stands for
    one): every query still runs in an executor, and the word service outside IRIs and
    strings is refused, whatever the guard read."""
    from tests.executor_helpers import pool_over, run_written

    folder = tmp_path / "s"
    LocalStore(folder).load_text("<http://e/a> <http://e/p> <http://e/b> .\n", name="a.nt")
    pool = pool_over(folder, workers=1, isolate=False)
    try:
        assert pool.wait_ready() is None and pool.unisolated == "not asked to"
        assert run_written(pool, "ASK { ?s ?p ?o }").body.endswith(b"true}")
        with pytest.raises(BadRequest, match="SERVICE is not allowed on this source"):
            run_written(pool, f"SELECT * {{ SERVICE <{listener.url}> {{ ?s ?p ?o }} }}")
        assert settle(listener) == 0
    finally:
        pool.close()


def test_virtuoso_cannot_be_made_to_fetch_for_a_caller(
    virtuoso_server: VirtuosoServer, listener: Listener
) -> None:
    """Virtuoso's bif:http_get fetched any URL for a caller (GET and POST, headers and
    body of the caller's choosing) with no SERVICE and no allowlist."""
    remote = SparqlEndpoint(virtuoso_server.url, profile="generic", name="virtuoso", timeout=20)
    for call in (
        f'bif:http_get("{listener.url}")',
        f'<bif:http_get>("{listener.url}")',
        f'bif:http_get("{listener.url}", 0, "POST", "Content-Type: text/plain", "x")',
    ):
        with pytest.raises(BadRequest, match="sparql_endpoint_functions"):
            remote.query(f"SELECT ({call} AS ?x) WHERE {{ }}")
    assert settle(listener) == 0
    cast = remote.query('SELECT (xsd:integer("7") AS ?n) WHERE { }')  # casts still run
    assert cast.rows[0]["n"].value == "7"


@pytest.mark.parametrize(
    ("query", "refused"),
    [
        ('PREFIX f: <http://e/f#> SELECT (f:go("x") AS ?x) {}', True),
        ('SELECT (<http://e/f#go>("x") AS ?x) {}', True),
        ("SELECT * { ?s <http://e/list> (1 2) }", True),  # a collection reads as a call
        ('PREFIX x: <http://www.w3.org/2001/XMLSchema#> SELECT (x:int("1") AS ?n) {}', False),
        ("SELECT * { ?s ?p ?o FILTER (STRLEN(?o) > 2) }", False),
    ],
)
def test_extension_functions_off_the_list_are_refused_by_their_shape(
    query: str, refused: bool
) -> None:
    xsd = ("http://www.w3.org/2001/XMLSchema#",)
    if refused:
        with pytest.raises(BadRequest, match="sparql_endpoint_functions"):
            refuse_extension_functions(query, xsd)
    else:
        refuse_extension_functions(query, xsd)
    refuse_extension_functions(query, (*xsd, "http://e/"))  # listed: allowed

"""/sparql through SPARQLWrapper and plain HTTP: query forms, formats, refusals, caps."""

from __future__ import annotations

import socket
from collections.abc import Callable
from urllib.parse import urlencode

import httpx
import pytest
import rdflib
from flask import Flask
from SPARQLWrapper import CSV, JSON, POST, TSV, XML, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import QueryBadFormed

from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from middleware.server.context import STATE_KEY
from tests.server.conftest import LiveServer, settings

TITANIC = "https://kgmw.dev/metaqa/entity/Titanic"
DIRECTED = "https://kgmw.dev/metaqa/relation/directed_by"
CAMERON = "https://kgmw.dev/metaqa/entity/James%20Cameron"
SELECT = f"SELECT ?who WHERE {{ <{TITANIC}> <{DIRECTED}> ?who }}"


def wrapper(server: LiveServer, query: str, fmt: str = JSON) -> SPARQLWrapper:
    client = SPARQLWrapper(f"{server.url}/sparql")
    client.setQuery(query)
    client.setReturnFormat(fmt)
    return client


def test_select_ask_and_construct_through_sparqlwrapper(scripted_server: LiveServer) -> None:
    rows = wrapper(scripted_server, SELECT).queryAndConvert()["results"]["bindings"]  # type: ignore[index]
    assert CAMERON in {r["who"]["value"] for r in rows}
    ask = wrapper(scripted_server, f"ASK {{ <{TITANIC}> ?p ?o }}").queryAndConvert()
    assert ask["boolean"] is True  # type: ignore[index]
    construct = wrapper(
        scripted_server, f"CONSTRUCT {{ <{TITANIC}> ?p ?o }} WHERE {{ <{TITANIC}> ?p ?o }}", XML
    ).queryAndConvert()
    assert isinstance(construct, rdflib.Graph)
    assert (rdflib.URIRef(TITANIC), rdflib.URIRef(DIRECTED), None) in construct


def test_results_in_xml_csv_and_tsv(scripted_server: LiveServer) -> None:
    xml = wrapper(scripted_server, SELECT, XML).query().convert()
    uris = {node.firstChild.data for node in xml.getElementsByTagName("uri")}  # type: ignore[union-attr]
    assert CAMERON in uris
    csv = wrapper(scripted_server, SELECT, CSV).query().convert()
    assert csv.startswith(b"who\r\n") and f"{CAMERON}\r\n".encode() in csv  # type: ignore[union-attr]
    tsv = wrapper(scripted_server, SELECT, TSV).query().convert()
    assert tsv.startswith(b"?who\n") and f"<{CAMERON}>\n".encode() in tsv  # type: ignore[union-attr]
    turtle = httpx.get(
        f"{scripted_server.url}/sparql",
        params={"query": f"DESCRIBE <{TITANIC}>"},
        headers={"Accept": "application/n-triples"},
    )
    assert turtle.headers["content-type"].startswith("application/n-triples")
    assert f"<{TITANIC}> <{DIRECTED}>" in turtle.text


def test_post_forms_of_the_protocol(scripted_server: LiveServer) -> None:
    url = f"{scripted_server.url}/sparql"
    direct = httpx.post(url, content=SELECT, headers={"Content-Type": "application/sparql-query"})
    form = httpx.post(url, data={"query": SELECT}, params={"format": "json"})
    assert direct.status_code == form.status_code == 200
    assert direct.json() == form.json()
    wrong = httpx.post(url, content=SELECT, headers={"Content-Type": "text/plain"})
    assert wrong.status_code == 400 and "application/sparql-query" in wrong.json()["hint"]


@pytest.mark.parametrize(
    "update",
    [
        "INSERT DATA { <http://a> <http://b> <http://c> }",
        "DELETE WHERE { ?s ?p ?o }",
        "LOAD <http://example.org/x.ttl>",
        "CLEAR ALL",
        "DROP GRAPH <http://g>",
        "CREATE GRAPH <http://g>",
        # an update hidden after a comment and odd spacing still parses as one
        "# just a comment\n  insert\tdata { <http://a> <http://b> <http://c> }",
    ],
)
def test_updates_are_refused_after_parsing(scripted_server: LiveServer, update: str) -> None:
    client = wrapper(scripted_server, update)
    client.setMethod(POST)
    with pytest.raises(QueryBadFormed):
        client.query()
    response = httpx.get(f"{scripted_server.url}/sparql", params={"query": update})
    assert response.status_code == 400
    assert response.json()["error"] == "read_only"


def test_update_endpoints_of_the_protocol_are_refused(scripted_server: LiveServer) -> None:
    url = f"{scripted_server.url}/sparql"
    as_update = httpx.post(
        url, content="CLEAR ALL", headers={"Content-Type": "application/sparql-update"}
    )
    as_form = httpx.post(url, data={"update": "CLEAR ALL"})
    assert as_update.status_code == as_form.status_code == 400
    assert as_update.json()["error"] == as_form.json()["error"] == "read_only"


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { SERVICE <http://169.254.169.254/> { ?s ?p ?o } }",
        "SELECT * WHERE { SERVICE SILENT <http://169.254.169.254/latest/meta-data/> { ?s ?p ?o } }",
        "PREFIX m: <http://169.254.169.254/> SELECT * WHERE { SERVICE m:x { ?s ?p ?o } }",
        "SELECT * WHERE { ?s ?p ?o FILTER EXISTS { SERVICE <http://169.254.169.254/> { ?s ?p ?o } } }",
        "SELECT * WHERE { { SELECT ?s WHERE { SERVICE <http://10.0.0.1/sparql> { ?s ?p ?o } } } }",
        "SELECT * WHERE { BIND(<http://169.254.169.254/> AS ?e) SERVICE ?e { ?s ?p ?o } }",
    ],
)
def test_service_off_the_allowlist_is_refused(scripted_server: LiveServer, query: str) -> None:
    response = httpx.get(f"{scripted_server.url}/sparql", params={"query": query})
    assert response.status_code == 400
    assert "SERVICE" in response.json()["message"]


def test_service_on_the_allowlist_is_federated(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore, oxigraph_server: str
) -> None:
    app = create_app(
        settings(sparql_service_allowlist=f"http://unused.example/sparql, {oxigraph_server}"),
        graphs={"sample": sample_graph},
    )
    server = serve(app)
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ SERVICE <{oxigraph_server}> {{ ?s ?p ?o }} }}"
    rows = wrapper(server, query).queryAndConvert()["results"]["bindings"]  # type: ignore[index]
    assert int(rows[0]["n"]["value"]) > 0


def test_results_are_capped_and_marked(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    server = serve(create_app(settings(sparql_max_rows=3), graphs={"sample": sample_graph}))
    response = httpx.get(f"{server.url}/sparql", params={"query": "SELECT * { ?s ?p ?o }"})
    assert len(response.json()["results"]["bindings"]) == 3
    assert response.headers["x-kgmw-truncated"] == "cut at 3 rows"
    graph = httpx.get(f"{server.url}/sparql", params={"query": "CONSTRUCT WHERE { ?s ?p ?o }"})
    assert len(graph.text.strip().splitlines()) <= 3 + 10  # prefixes aside, three triples
    assert graph.headers["x-kgmw-truncated"] == "cut at 3 rows"


def test_clear_errors_for_bad_requests(scripted_server: LiveServer) -> None:
    url = f"{scripted_server.url}/sparql"
    cases = {
        "no query": httpx.get(url),
        "syntax": httpx.get(url, params={"query": "SELEC * { ?s ?p ?o }"}),
        "source": httpx.get(url, params={"query": SELECT, "source": "nowhere"}),
        "graph uri": httpx.get(url, params={"query": SELECT, "default-graph-uri": "no iri"}),
        "format": httpx.get(url, params={"query": SELECT, "format": "turtle"}),
    }
    statuses = {name: (r.status_code, r.json()["message"]) for name, r in cases.items()}
    assert statuses["no query"] == (400, "no query given")
    assert statuses["syntax"][0] == 400 and "not a valid SPARQL query" in statuses["syntax"][1]
    assert statuses["source"] == (404, "no source named 'nowhere'")
    assert statuses["graph uri"][0] == 400 and "not an absolute IRI" in statuses["graph uri"][1]
    assert statuses["format"][0] == 400 and "select result" in statuses["format"][1]


HEAD_QUERIES = {
    "select": SELECT,
    "ask": f"ASK {{ <{TITANIC}> ?p ?o }}",
    "describe": f"DESCRIBE <{TITANIC}>",
    "syntax error": "SELEC * { ?s ?p ?o }",
}


def test_head_is_answered_like_get_without_a_body(scripted_server: LiveServer) -> None:
    url = f"{scripted_server.url}/sparql"
    for name, query in HEAD_QUERIES.items():
        get = httpx.get(url, params={"query": query})
        head = httpx.head(url, params={"query": query})
        assert head.status_code == get.status_code, (name, head.status_code)
        for header in ("content-type", "content-length", "x-kgmw-source"):
            assert head.headers.get(header) == get.headers.get(header), (name, header)
        assert head.content == b"", name
    target = f"/sparql?{urlencode({'query': SELECT})}"
    with socket.create_connection(("127.0.0.1", httpx.URL(url).port or 80)) as raw:
        raw.sendall(f"HEAD {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        sent = b"".join(iter(lambda: raw.recv(65536), b""))
    head_part, _, after = sent.partition(b"\r\n\r\n")
    assert head_part.startswith(b"HTTP/1.1 200") and after == b""  # no body on the wire


def test_head_through_the_flask_test_client(sample_graph: LocalStore) -> None:
    app = create_app(settings(), graphs={"sample": sample_graph})
    try:
        get = app.test_client().get("/sparql", query_string={"query": SELECT, "format": "csv"})
        head = app.test_client().head("/sparql", query_string={"query": SELECT, "format": "csv"})
    finally:
        app.config[STATE_KEY].close()  # its query executors
    assert head.status_code == get.status_code == 200
    assert head.headers["Content-Type"] == get.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert head.headers["Content-Length"] == get.headers["Content-Length"] == str(len(get.data))
    assert head.data == b""

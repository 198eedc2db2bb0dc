"""The dataset of a /sparql request, exactly as the SPARQL 1.1 Protocol (§2.1.4) defines
it: with ``default-graph-uri`` or ``named-graph-uri`` given, the dataset is what those
parameters name and nothing else (the part left out is empty); with neither, the
store's own. Held for an in-memory store (queries in the service process), an on-disk
store (queries in executor processes) and a remote endpoint; an rdflib graph refuses
a dataset rather than answer over the whole graph."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import rdflib
from flask import Flask

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.backends.rdflib_graph import RdflibGraph
from middleware.kg.operations import GraphOperations
from middleware.kg.sparql_guard import QueryDataset
from middleware.server import create_app
from tests.conftest import start_oxigraph
from tests.server.conftest import LiveServer, settings

EX = "http://example.org/"
QUADS = f"""\
<{EX}s> <{EX}p> "in the default graph" .
<{EX}s> <{EX}p> "in g1" <{EX}g1> .
<{EX}s> <{EX}p> "in g2" <{EX}g2> .
"""
# every value the dataset shows, with the graph it came from ('-': the default graph)
SEEN = f"SELECT ?g ?o {{ {{ ?s <{EX}p> ?o }} UNION {{ GRAPH ?g {{ ?s <{EX}p> ?o }} }} }}"


def seen(server: LiveServer, **dataset: str | list[str]) -> set[tuple[str, str]]:
    response = httpx.post(f"{server.url}/sparql", data={"query": SEEN, **dataset}, timeout=30)
    assert response.status_code == 200, response.text
    rows = response.json()["results"]["bindings"]
    return {
        (row["g"]["value"].removeprefix(EX) if "g" in row else "-", row["o"]["value"])
        for row in rows
    }


def check_datasets(server: LiveServer) -> None:
    everything = {("-", "in the default graph"), ("g1", "in g1"), ("g2", "in g2")}
    assert seen(server) == everything
    # only default-graph-uri: no named graphs at all
    assert seen(server, **{"default-graph-uri": f"{EX}g1"}) == {("-", "in g1")}
    # only named-graph-uri: an empty default graph, only the graphs named
    assert seen(server, **{"named-graph-uri": f"{EX}g2"}) == {("g2", "in g2")}
    both = {"default-graph-uri": [f"{EX}g1", f"{EX}g2"], "named-graph-uri": f"{EX}g1"}
    assert seen(server, **both) == {("-", "in g1"), ("-", "in g2"), ("g1", "in g1")}


def quads_file(folder: Path) -> Path:
    path = folder / "data.nq"
    path.write_text(QUADS, encoding="utf-8")
    return path


def test_the_dataset_of_an_in_memory_store(serve: Callable[[Flask], LiveServer]) -> None:
    store = LocalStore()
    store.load_text(QUADS, name="data.nq")
    check_datasets(serve(create_app(settings(), graphs={"memory": store})))


def test_the_dataset_in_the_query_executors(
    serve: Callable[[Flask], LiveServer], tmp_path: Path
) -> None:
    store = LocalStore(tmp_path / "store")
    store.load([quads_file(tmp_path)])
    check_datasets(serve(create_app(settings(), graphs={"disk": store})))


@pytest.fixture
def quads_endpoint(tmp_path: Path) -> Iterator[str]:
    url, process = start_oxigraph(quads_file(tmp_path), tmp_path / "oxigraph")
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_dataset_is_passed_on_to_an_endpoint_as_given(
    serve: Callable[[Flask], LiveServer], quads_endpoint: str
) -> None:
    check_datasets(serve(create_app(settings(), graphs={"remote": SparqlEndpoint(quads_endpoint)})))


def test_a_library_caller_gets_the_same_dataset() -> None:
    store: GraphOperations = LocalStore()
    store.load_text(QUADS, name="data.nq")  # type: ignore[attr-defined]
    only_default = store.query(SEEN, dataset=QueryDataset((f"{EX}g1",)))
    assert [row["o"].value for row in only_default.rows] == ["in g1"]
    only_named = store.query(SEEN, dataset=QueryDataset(named_graphs=(f"{EX}g2",)))
    assert [(row["g"].value, row["o"].value) for row in only_named.rows] == [(f"{EX}g2", "in g2")]


def test_an_rdflib_graph_refuses_a_dataset_rather_than_ignore_it(
    serve: Callable[[Flask], LiveServer],
) -> None:
    graph = rdflib.Dataset()
    graph.parse(data=QUADS, format="nquads")
    server = serve(create_app(settings(), graphs={"rdflib": RdflibGraph(graph)}))
    response = httpx.post(
        f"{server.url}/sparql", data={"query": SEEN, "default-graph-uri": f"{EX}g1"}, timeout=30
    )
    assert response.status_code == 400
    assert "does not take default-graph-uri" in response.json()["message"]

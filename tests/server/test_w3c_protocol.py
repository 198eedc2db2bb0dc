"""Every test of the W3C SPARQL 1.1 Protocol manifest, run against the service.

The store serves the manifest's graph data (``data.nq``). Query tests must get the
status class and result the manifest names; update tests must be refused with a 4xx,
since ``/sparql`` is read-only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

import httpx
import pytest
from rdflib import Graph, Namespace
from rdflib.collection import Collection
from rdflib.term import Node

from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from tests.server.conftest import LiveServer, settings

SUITE = Path(os.environ.get("KGMW_W3C_PROTOCOL", Path(__file__).parents[1] / "data/w3c-protocol"))
MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
HT = Namespace("http://www.w3.org/2011/http#")
CNT = Namespace("http://www.w3.org/2011/content#")
HTS = Namespace("http://www.w3.org/2011/http-statusCodes#")
FORMATS = {
    "tabular": {
        "application/sparql-results+xml",
        "application/sparql-results+json",
        "text/csv",
        "text/tab-separated-values",
    },
    "boolean": {"application/sparql-results+xml", "application/sparql-results+json"},
    "RDF": {"application/rdf+xml", "text/turtle", "application/n-triples", "application/xhtml+xml"},
}


@dataclass
class Exchange:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes | None
    statuses: set[str]  # "2xx", "3xx", "4xx"
    boolean: bool | None = None
    format: str | None = None


@dataclass
class ProtocolTest:
    id: str
    name: str
    exchanges: list[Exchange] = field(default_factory=list)

    @property
    def is_update(self) -> bool:
        return "update" in self.id


def _items(graph: Graph, head: Node | None) -> list[Node]:
    return list(Collection(graph, head)) if head is not None else []


def read_manifest(path: Path) -> list[ProtocolTest]:
    graph = Graph().parse(path, format="turtle")
    manifest = next(graph.subjects(MF.entries, None))
    tests = []
    for entry in _items(graph, graph.value(manifest, MF.entries)):
        test = ProtocolTest(str(entry).rsplit("#", 1)[-1], str(graph.value(entry, MF.name)))
        action = graph.value(entry, MF.action)
        for request in _items(graph, graph.value(action, HT.requests)):
            headers = {
                str(graph.value(h, HT.fieldName)): str(graph.value(h, HT.fieldValue))
                for h in _items(graph, graph.value(request, HT.headers))
            }
            body_node = graph.value(request, HT.body)
            body = None
            if body_node is not None:
                encoding = str(graph.value(body_node, CNT.characterEncoding) or "UTF-8")
                body = str(graph.value(body_node, CNT.chars)).encode(encoding)
            response = graph.value(request, HT.resp)
            statuses = {
                str(s).rsplit("StatusCode", 1)[-1].lower()
                for s in graph.objects(response, MF.expectedStatus)
            }
            expected = graph.value(response, MF.expectedBoolean)
            shape = graph.value(response, MF.expectedFormat)
            test.exchanges.append(
                Exchange(
                    str(graph.value(request, HT.methodName)),
                    str(graph.value(request, HT.absolutePath)),
                    headers,
                    body,
                    statuses,
                    None if expected is None else bool(expected.toPython()),
                    None if shape is None else str(shape),
                )
            )
        tests.append(test)
    return tests


TESTS = read_manifest(SUITE / "manifest.ttl")


@pytest.fixture(scope="module")
def protocol_server(tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    store = LocalStore(str(tmp_path_factory.mktemp("w3c") / "store"))
    store.load([SUITE / "data.nq"])
    store.name = "w3c"
    return LiveServer(create_app(settings(), graphs={"w3c": store}))


def boolean_of(response: httpx.Response) -> bool:
    kind = response.headers["content-type"].split(";")[0]
    if kind == "application/sparql-results+json":
        return bool(json.loads(response.text)["boolean"])
    root = ElementTree.fromstring(response.content)
    found = root.find("{http://www.w3.org/2005/sparql-results#}boolean")
    assert found is not None, response.text
    return (found.text or "").strip() == "true"


def test_the_manifest_was_read() -> None:
    assert len(TESTS) == 34
    assert sum(t.is_update for t in TESTS) == 14


@pytest.mark.parametrize("test", TESTS, ids=[t.id for t in TESTS])
def test_w3c_protocol(protocol_server: LiveServer, test: ProtocolTest) -> None:
    for exchange in test.exchanges:
        path = exchange.path.replace("/sparql/", "/sparql", 1)
        response = httpx.request(
            exchange.method,
            protocol_server.url + path,
            headers=exchange.headers,
            content=exchange.body,
            timeout=30,
        )
        status = f"{response.status_code // 100}xx"
        if test.is_update:
            assert status == "4xx", (response.status_code, response.text)
            return  # refused: the rest of an update test needs a writable store
        assert status in exchange.statuses, (response.status_code, response.text)
        if status != "2xx":
            continue
        kind = response.headers["content-type"].split(";")[0]
        if exchange.format:
            assert kind in FORMATS[exchange.format], kind
        if exchange.boolean is not None:
            assert boolean_of(response) is exchange.boolean


def test_the_server_is_stopped(protocol_server: LiveServer) -> None:
    protocol_server.stop()

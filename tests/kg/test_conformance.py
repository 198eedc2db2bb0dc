"""The conformance suite against each backend: memory, disk, and a real Oxigraph server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import rdflib

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.backends.rdflib_graph import RdflibGraph
from middleware.testing.graphs import GraphConformance, films_path


class TestLocalStoreInMemory(GraphConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls) -> LocalStore:
        store = LocalStore(profile="generic", name="memory")
        store.load([films_path()])
        return store


class TestLocalStoreOnDisk(GraphConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStore]:
        folder: Path = tmp_path_factory.mktemp("disk") / "store"
        LocalStore(folder, profile="generic").load([films_path()])
        store = LocalStore(folder, read_only=True, name="disk")
        yield store
        store.close()


class TestSparqlEndpoint(GraphConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls, oxigraph_server: str) -> SparqlEndpoint:
        return SparqlEndpoint(oxigraph_server, profile="generic", name="oxigraph", timeout=10)


class TestRdflibGraph(GraphConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls) -> RdflibGraph:
        return RdflibGraph(rdflib.Graph().parse(films_path()), name="rdflib")

"""Every registered method over every backend: a local store, an Oxigraph server, rdflib."""

from __future__ import annotations

import pytest
import rdflib

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.backends.rdflib_graph import RdflibGraph
from middleware.testing.graphs import films_path
from middleware.testing.methods import MethodConformance


class TestMethodsOverLocalStore(MethodConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls) -> LocalStore:
        store = LocalStore(profile="generic", name="films")
        store.load([films_path()])
        return store


class TestMethodsOverEndpoint(MethodConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls, oxigraph_server: str) -> SparqlEndpoint:
        return SparqlEndpoint(oxigraph_server, profile="generic", name="films", timeout=10)


class TestMethodsOverRdflib(MethodConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls) -> RdflibGraph:
        return RdflibGraph(rdflib.Graph().parse(films_path()), name="films")

"""The conformance suite and Virtuoso's habits against a real Virtuoso server."""

from __future__ import annotations

import pytest

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.testing.graphs import GraphConformance
from tests.virtuoso_server import VirtuosoServer


class TestVirtuosoGraph(GraphConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def graph(cls, virtuoso_server: VirtuosoServer) -> SparqlEndpoint:
        return SparqlEndpoint(virtuoso_server.url, profile="generic", name="virtuoso", timeout=20)

"""The transports under the graph operations: embedded store, SPARQL endpoint, rdflib graph."""

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.backends.rdflib_graph import RdflibGraph

__all__ = ["LocalStore", "RdflibGraph", "SparqlEndpoint"]

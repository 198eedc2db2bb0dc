"""The knowledge-graph layer: the only code that speaks SPARQL."""

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.backends.rdflib_graph import RdflibGraph
from middleware.kg.base import (
    Capabilities,
    Entity,
    Hop,
    KnowledgeGraph,
    LabelRow,
    Path,
    QueryResult,
    Triple,
)
from middleware.kg.operations import GraphOperations
from middleware.kg.profiles import Profile, load_profile

__all__ = [
    "Capabilities",
    "Entity",
    "GraphOperations",
    "Hop",
    "KnowledgeGraph",
    "LabelRow",
    "LocalStore",
    "Path",
    "Profile",
    "QueryResult",
    "RdflibGraph",
    "SparqlEndpoint",
    "Triple",
    "load_profile",
]

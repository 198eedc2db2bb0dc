"""The knowledge-graph layer: the only code that speaks SPARQL."""

from middleware.kg.base import Entity, Hop, KnowledgeGraph, Path, QueryResult, Triple
from middleware.kg.endpoint import SparqlEndpoint
from middleware.kg.local import LocalStore
from middleware.kg.profiles import Profile, load_profile

__all__ = [
    "Entity",
    "Hop",
    "KnowledgeGraph",
    "LocalStore",
    "Path",
    "Profile",
    "QueryResult",
    "SparqlEndpoint",
    "Triple",
    "load_profile",
]

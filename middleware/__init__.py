"""kg-middleware: ground LLM answers in RDF knowledge graphs over SPARQL.

>>> from middleware import LocalStore, EntityLinker, Verbalizer
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nCollateral|directed_by|Michael Mann\\n", name="kb.txt")
>>> linker = EntityLinker(kg)
>>> heat, collateral = linker.best("Heat"), linker.best("collateral")
>>> [Verbalizer(kg).path(p) for p in kg.paths(heat.iri, collateral.iri)]
['Heat | directed by | Michael Mann | directed | Collateral']
"""

from middleware.errors import (
    BadRequest,
    ConfigError,
    EndpointError,
    EndpointTimeout,
    LoadError,
    MiddlewareError,
    NotFound,
    ReadOnlyViolation,
)
from middleware.kg import (
    Entity,
    Hop,
    KnowledgeGraph,
    LocalStore,
    Path,
    Profile,
    QueryResult,
    SparqlEndpoint,
    Triple,
    load_profile,
)
from middleware.linking import EntityLinker
from middleware.sample import sample_store
from middleware.settings import Settings
from middleware.verbalize import Verbalizer

__version__ = "0.1.0"
__all__ = [
    "BadRequest",
    "ConfigError",
    "EndpointError",
    "EndpointTimeout",
    "Entity",
    "EntityLinker",
    "Hop",
    "KnowledgeGraph",
    "LoadError",
    "LocalStore",
    "MiddlewareError",
    "NotFound",
    "Path",
    "Profile",
    "QueryResult",
    "ReadOnlyViolation",
    "Settings",
    "SparqlEndpoint",
    "Triple",
    "Verbalizer",
    "load_profile",
    "sample_store",
]

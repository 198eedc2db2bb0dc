"""kg-middleware: ground LLM answers in RDF knowledge graphs over SPARQL.

>>> from middleware import LocalStore, EntityLinker, Verbalizer
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nCollateral|directed_by|Michael Mann\\n", name="kb.txt")
>>> linker = EntityLinker(kg)
>>> heat, collateral = linker.best("Heat"), linker.best("collateral")
>>> [Verbalizer(kg).path(p) for p in kg.paths(heat.iri, collateral.iri)]
['Heat | directed by | Michael Mann | directed | Collateral']
"""

from middleware.config import Settings
from middleware.errors import (
    BadRequest,
    BudgetExceeded,
    ConfigError,
    EndpointError,
    EndpointTimeout,
    LLMError,
    LLMOutputError,
    LLMTimeout,
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
from middleware.kg.sample import sample_store
from middleware.llm import (
    LLM,
    Budget,
    EmbeddedLLM,
    Ledger,
    LLMSession,
    OpenAICompatLLM,
    ScriptedLLM,
    open_llm,
)
from middleware.methods import IO, Answer, CoT, RoK, RoKConfig
from middleware.methods.aio import AsyncMethod, aask
from middleware.text.embeddings import (
    Encoder,
    HashEncoder,
    SentenceEncoder,
    VectorIndex,
    open_encoder,
)
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

__version__ = "0.1.0"
__all__ = [
    "IO",
    "LLM",
    "Answer",
    "AsyncMethod",
    "BadRequest",
    "Budget",
    "BudgetExceeded",
    "CoT",
    "ConfigError",
    "EmbeddedLLM",
    "Encoder",
    "EndpointError",
    "EndpointTimeout",
    "Entity",
    "EntityLinker",
    "HashEncoder",
    "Hop",
    "KnowledgeGraph",
    "LLMError",
    "LLMOutputError",
    "LLMSession",
    "LLMTimeout",
    "Ledger",
    "LoadError",
    "LocalStore",
    "MiddlewareError",
    "NotFound",
    "OpenAICompatLLM",
    "Path",
    "Profile",
    "QueryResult",
    "ReadOnlyViolation",
    "RoK",
    "RoKConfig",
    "ScriptedLLM",
    "SentenceEncoder",
    "Settings",
    "SparqlEndpoint",
    "Triple",
    "VectorIndex",
    "Verbalizer",
    "aask",
    "load_profile",
    "open_encoder",
    "open_llm",
    "sample_store",
]

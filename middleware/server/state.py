"""What the service holds between requests: its settings, sources, LLM and methods.

Everything heavy opens on first use and is shared by every request afterwards; the
graphs and the LLM backends are safe to share between threads.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping
from typing import Any

from middleware.config import Settings
from middleware.errors import BadRequest, ConfigError, NotFound
from middleware.kg.base import KnowledgeGraph
from middleware.kg.executors.limits import ExecutorLimits
from middleware.kg.executors.pool import QueryPool
from middleware.kg.open import open_graph
from middleware.kg.operations import GraphOperations
from middleware.llm.base import LLM
from middleware.llm.factory import open_llm
from middleware.llm.ledger import Budget
from middleware.methods.method import Method
from middleware.methods.registry import METHODS, build_method
from middleware.server.address_gate import AddressGate
from middleware.server.answer_store import AnswerStore, store_path
from middleware.server.guard import PenaltyBox
from middleware.support.urls import without_credentials
from middleware.text.linking import EntityLinker

DEFAULT_SOURCE = "default"


class ServiceState:
    """The settings, the named sources, the LLM and the built methods of one app.

    ``graphs`` and ``llm`` replace what the settings would open (tests and library
    users hand in their own); the first graph given is the default source.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        llm: LLM | None = None,
        graphs: Mapping[str, GraphOperations] | None = None,
        gate: AddressGate | None = None,
    ) -> None:
        self.settings = settings
        self._llm = llm
        self._given = dict(graphs or {})
        self._graphs: dict[str, GraphOperations] = dict(self._given)
        self._methods: dict[tuple[str, str], Method] = {}
        self._configured: set[str] = set()  # sources whose executors follow their settings
        self.gate = gate or AddressGate()  # addresses the server refuses at the connection
        self.penalties = PenaltyBox(settings.sparql_penalty, gate=self.gate)  # /sparql callers
        self._answers: AnswerStore | None = None
        self._lock = threading.RLock()

    # -- sources ----------------------------------------------------------------------
    @property
    def default_source(self) -> str:
        return next(iter(self._given), DEFAULT_SOURCE)

    def source_names(self) -> list[str]:
        """The default source first, then the ``[sources.NAME]`` tables of the config."""
        if self._given:
            return list(self._given)
        return [DEFAULT_SOURCE, *self.settings.source_names]

    def source_settings(self, name: str) -> Settings:
        if name == DEFAULT_SOURCE or name in self._given:
            return self.settings
        return self.settings.for_source(name)

    def graph(self, name: str | None = None) -> GraphOperations:
        """The open graph of source ``name`` (default source when None)."""
        key = name or self.default_source
        if key not in self.source_names():
            raise NotFound(
                f"no source named {key!r}",
                hint=f"known sources: {', '.join(self.source_names())}",
            )
        with self._lock:
            if key not in self._graphs:
                graph = open_graph(self.source_settings(key))
                if key != DEFAULT_SOURCE:
                    graph.name = key  # facts are tagged with the source they came from
                self._graphs[key] = graph
            return self._graphs[key]

    def query_pool(self, name: str | None = None) -> QueryPool | None:
        """The executor processes for caller queries on source ``name``, under the
        source's settings: None when the source is not a local store (an endpoint's
        own engine runs them)."""
        key = name or self.default_source
        caller_queries = self.graph(key).caller_queries
        if caller_queries is None:
            return None
        with self._lock:
            if key not in self._configured:
                caller_queries.configure(ExecutorLimits.from_settings(self.source_settings(key)))
                self._configured.add(key)
        return caller_queries.pool()

    def describe_source(self, name: str) -> dict[str, Any]:
        """What ``/v1/sources`` tells about a source, without opening it or leaking secrets."""
        if name in self._given:
            graph = self._given[name]
            return {
                "name": name,
                "kind": type(graph).__name__,
                "profile": graph.profile.name,
                "default": name == self.default_source,
            }
        settings = self.source_settings(name)
        if settings.endpoint:
            kind, where = "endpoint", without_credentials(settings.endpoint)
        elif settings.store:
            kind, where = "store", None
        else:
            kind, where = "sample", None
        body: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "profile": settings.profile or ("metaqa" if kind == "sample" else "generic"),
            "default": name == self.default_source,
        }
        if where:
            body["endpoint"] = where
        return body

    # -- LLM and methods ---------------------------------------------------------------
    @property
    def llm(self) -> LLM:
        with self._lock:
            if self._llm is None:
                self._llm = open_llm(self.settings)
            return self._llm

    def method(self, name: str | None, source: str | None = None) -> Method:
        """Method ``name`` (default: setting ``method``) built over source ``source``."""
        key = (name or self.settings.method).strip().lower()
        if key not in METHODS:
            raise BadRequest(
                f"unknown method {name!r}", hint=f"known methods: {', '.join(METHODS)}"
            )
        graph_name = source or self.default_source
        graph = self.graph(graph_name)
        with self._lock:
            built = self._methods.get((key, graph_name))
            if built is None:
                built = build_method(key, self.source_settings(graph_name), self.llm, graph)
                self._methods[(key, graph_name)] = built
            return built

    def linker(self, graph: KnowledgeGraph) -> EntityLinker:
        """A linker over ``graph`` with the service's linking settings."""
        return EntityLinker(
            graph,
            limit=self.settings.link_limit,
            fuzzy_cutoff=self.settings.fuzzy_cutoff,
            max_queries=self.settings.link_max_queries,
        )

    # -- kept answers --------------------------------------------------------------------
    @property
    def keys_enabled(self) -> bool:
        return bool(self.settings.server_api_keys or self.settings.key_grants)

    @property
    def answer_store(self) -> AnswerStore | None:
        """Where chat answers are kept for ``GET /v1/answers/{id}``; None when
        ``answers_ttl`` is 0."""
        if self.settings.answers_ttl <= 0:
            return None
        with self._lock:
            if self._answers is None:
                path = store_path(self.settings.cache_dir)
                try:
                    self._answers = AnswerStore(
                        path,
                        ttl=self.settings.answers_ttl,
                        max_bytes=int(self.settings.answers_max_mb * 1_000_000),
                    )
                except (OSError, sqlite3.Error) as err:
                    raise ConfigError(
                        f"cannot keep chat answers in {path}: {err}",
                        hint="set cache_dir to a writable folder, or answers_ttl = 0",
                    ) from err
            return self._answers

    def budget(self, max_calls: int | None) -> Budget:
        """A request's budget: the caller may lower ``max_calls``, never raise it."""
        ceiling = self.settings.max_calls
        calls = ceiling if max_calls is None else min(max_calls, ceiling)
        return Budget(max_calls=calls, max_tokens=self.settings.max_tokens)

    def close(self) -> None:
        for graph in self._graphs.values():
            if graph.caller_queries is not None:
                graph.caller_queries.close()
        for graph in self._graphs.values():
            if graph not in self._given.values():
                graph.close()

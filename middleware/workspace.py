"""One place that assembles what answering needs: sources, LLM, encoder, linkers,
budgets and methods, the same way for every front end.

The CLI, eval, ``kgmw learn``, ``kgmw ksl-dataset``, the service, MCP, LangChain,
LlamaIndex and the library's runner all take their graphs, linkers and methods from a
``Workspace``, so a setting means the same thing everywhere (``link_max_queries`` on a
source links the same in ``kgmw link``, MCP ``link``, ``kgmw ask`` and ``/v1/answer``),
and a process opens one encoder however many methods it builds.

Everything heavy opens on first use and is shared afterwards; graphs, the LLM and the
encoder are safe to share between threads.

>>> from middleware.config import Settings
>>> from middleware.kg.sample import sample_store
>>> from middleware.llm.scripted import ScriptedLLM
>>> work = Workspace(Settings.build({"encoder": "hash"}), llm=ScriptedLLM(),
...                  graphs={"films": sample_store()})
>>> work.default_source, work.source_names()
('films', ['films'])
>>> [e.label for e in work.linker().link("Titanic")][:1]
['Titanic']
>>> work.method("qsm") is work.method("qsm"), work.budget(None).max_calls
(True, 12)
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from middleware.config import Settings
from middleware.errors import NotFound
from middleware.kg.backends.registry import BACKENDS
from middleware.kg.base import KnowledgeGraph
from middleware.kg.executors.limits import ExecutorLimits
from middleware.kg.executors.pool import QueryPool
from middleware.kg.open import open_graph
from middleware.kg.operations import GraphOperations
from middleware.llm.base import LLM
from middleware.llm.factory import open_llm
from middleware.llm.ledger import Budget
from middleware.methods.calibration import load_calibration
from middleware.methods.method import Method, MethodBase
from middleware.methods.registry import SharedEncoder, build_method, method_spec
from middleware.support.urls import without_credentials
from middleware.text.embeddings.encoders import Encoder
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

DEFAULT_SOURCE = "default"


class Workspace:
    """The settings, the named sources, the LLM, the encoder and the built methods.

    ``graphs`` and ``llm`` replace what the settings would open (tests and library
    users hand in their own); the first graph given is the default source. Without
    ``graphs``, the sources are the ``[sources.NAME]`` tables of the settings, and the
    default one is ``default`` (its table's settings over the common ones), else the
    one the common settings name (``store``, ``endpoint`` or the sample graph).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        llm: LLM | None = None,
        graphs: Mapping[str, GraphOperations] | None = None,
        default: str | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        load_calibration(settings.answer_calibration)  # a bad file fails before any call
        self._llm = llm
        self._default = default
        # what the user typed (flags) wins over a source's table too
        self._overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
        if default is not None and not graphs:
            settings.for_source(default)  # an unknown name fails here, listing the known ones
        self._given = dict(graphs or {})
        self._graphs: dict[str, GraphOperations] = dict(self._given)
        self._methods: dict[tuple[str, str], Method] = {}
        self._configured: set[str] = set()  # sources whose executors follow their settings
        self._encoders: dict[tuple[object, ...], SharedEncoder] = {}
        self._lock = threading.RLock()

    # -- sources ----------------------------------------------------------------------
    @property
    def default_source(self) -> str:
        return next(iter(self._given), self._default or DEFAULT_SOURCE)

    def source_names(self) -> list[str]:
        """The default source first, then the ``[sources.NAME]`` tables of the config."""
        if self._given:
            return list(self._given)
        first = self.default_source
        return [first, *(name for name in self.settings.source_names if name != first)]

    def source_settings(self, name: str | None = None) -> Settings:
        """The settings of source ``name``: its table over the common ones."""
        key = name or self.default_source
        if key == DEFAULT_SOURCE or key in self._given:
            return self.settings
        return self.settings.for_source(key).replace(**self._overrides)

    def settings_of(self, graph: KnowledgeGraph) -> Settings:
        """The settings of the source ``graph`` was opened for (the common ones for a
        graph this workspace did not open)."""
        with self._lock:
            name = next((n for n, g in self._graphs.items() if g is graph), None)
        return self.source_settings(name) if name is not None else self.settings

    def graph(self, name: str | None = None) -> GraphOperations:
        """The open graph of source ``name`` (default source when None), named after its
        source when the config named it (``[sources.NAME]``)."""
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
                    graph.name = key
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
        """What a source is, without opening it or showing its credentials."""
        if name in self._given:
            graph = self._given[name]
            return {
                "name": name,
                "kind": type(graph).__name__,
                "profile": graph.profile.name,
                "default": name == self.default_source,
            }
        settings = self.source_settings(name)
        chosen = [backend.name for backend in BACKENDS if backend.chosen(settings)]
        kind = chosen[0] if chosen else "sample"
        where = (
            without_credentials(settings.endpoint)
            if kind == "endpoint" and settings.endpoint
            else None
        )
        body: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "profile": settings.profile or ("metaqa" if kind == "sample" else "generic"),
            "default": name == self.default_source,
        }
        if where:
            body["endpoint"] = where
        return body

    # -- what answering uses ----------------------------------------------------------
    @property
    def llm(self) -> LLM:
        """The LLM given, else the one the settings name (opened now)."""
        with self._lock:
            if self._llm is None:
                self._llm = open_llm(self.settings)
            return self._llm

    @property
    def encoder(self) -> Encoder:
        """The one sentence encoder of this workspace, opened on first use."""
        return self.shared_encoder(self.settings)()

    def shared_encoder(self, settings: Settings) -> SharedEncoder:
        """The encoder ``settings`` ask for, one per distinct choice (a source may name
        its own), opened on first use."""
        key = (
            settings.encoder,
            settings.encoder_batch_size,
            settings.encoder_cache,
            settings.cache_dir,
        )
        with self._lock:
            return self._encoders.setdefault(key, SharedEncoder(settings))

    def linker(self, source: str | None = None) -> EntityLinker:
        """A linker over source ``source`` with that source's linking settings."""
        return EntityLinker.from_settings(self.graph(source), self.source_settings(source))

    def verbalizer(self, source: str | None = None) -> Verbalizer:
        """Triples of source ``source`` as text, with its settings."""
        settings = self.source_settings(source)
        return Verbalizer(self.graph(source), literal_max_chars=settings.literal_max_chars)

    def budget(self, max_calls: int | None = None) -> Budget:
        """A question's budget: ``max_calls`` may lower setting ``max_calls``, never
        raise it (a front end that lets its user raise it changes the setting)."""
        ceiling = self.settings.max_calls
        calls = ceiling if max_calls is None else min(max_calls, ceiling)
        return Budget(max_calls=calls, max_tokens=self.settings.max_tokens)

    def method_name(self, name: str | None = None) -> str:
        """The registered name ``name`` stands for (default: setting ``method``); an
        unknown name is a BadRequest listing the known ones."""
        return method_spec(name or self.settings.method).name

    def method(self, name: str | None = None, source: str | None = None) -> Method:
        """Method ``name`` (default: setting ``method``) over source ``source``, built
        once with the source's settings, this workspace's LLM and its encoder."""
        key = self.method_name(name)
        graph_name = source or self.default_source
        graph = self.graph(graph_name)
        with self._lock:
            built = self._methods.get((key, graph_name))
            if built is None:
                settings = self.source_settings(graph_name)
                encoder = self.shared_encoder(settings)
                built = build_method(key, settings, self.llm, graph, encoder=encoder)
                if isinstance(built, MethodBase):  # a question may use several sources
                    built.use_source_settings(self.settings_of)
                self._methods[(key, graph_name)] = built
            return built

    def close(self) -> None:
        """Stop the executors of every open source and close the graphs it opened."""
        for graph in self._graphs.values():
            if graph.caller_queries is not None:
                graph.caller_queries.close()
        for graph in self._graphs.values():
            if graph not in self._given.values():
                graph.close()

"""What the MCP server's tools and resources do, without the MCP SDK: plain calls over a
``ServiceState`` that return JSON-ready dicts and raise ``MiddlewareError``.

``ask`` goes through the same ``Method.run`` as ``kgmw ask`` and ``/v1/answer``;
``sparql`` through ``sparql_proxy.answer``, the ``/sparql`` route's own path: the same
read-only guard, ``SERVICE`` allowlist, size, depth and row limits, and for an on-disk
store the same executor processes. ``neighbors``, ``paths`` and ``link`` are the graph
commands' operations. ``middleware.integrations.mcp_server`` registers them with the SDK.
"""

from __future__ import annotations

import json
from typing import Any

from pyoxigraph import NamedNode

from middleware.errors import BadRequest, NotFound
from middleware.integrations.answer_text import answer_text
from middleware.kg.operations import GraphOperations
from middleware.kg.profiles import available_profiles, load_profile
from middleware.kg.sparql_guard import QueryDataset
from middleware.kg.terms import looks_like_iri, to_iri
from middleware.serialize.answer_json import answer_dict
from middleware.serialize.graph_json import entity_json, path_json, triple_json
from middleware.server.metrics import Metrics
from middleware.server.proxy.sparql_proxy import answer as proxy_answer
from middleware.server.state import ServiceState
from middleware.text.verbalize import Verbalizer

# MCP queries have no caller id: the penalty box is the HTTP service's, and one stopped
# query must not lock every MCP client out (the limits and executors still hold)
CALLER = ""
BASE_IRI = "urn:kgmw:mcp"  # relative IRIs in queries resolve against this (or sparql_base_iri)
DIRECTIONS = ("both", "out", "in")
SUMMARY_EVIDENCE = 10  # evidence items in ask's summary (the JSON beside it holds them all)


class GraphTools:
    """The tools of one MCP server: its settings, sources and LLM live in ``state``."""

    def __init__(self, state: ServiceState) -> None:
        self.state = state
        self._metrics = Metrics()

    # -- tools ------------------------------------------------------------------------
    def ask(self, question: str, method: str | None = None, source: str | None = None) -> Any:
        """The Answer JSON of ``question`` (``answer`` null and ``found`` false when the
        graph does not hold it, the withheld ``guess``, the ``support``, evidence,
        entities, warnings, usage) and ``summary``, the same in words for an agent."""
        runner = self.state.method(method, source)
        answer = runner.run(question, budget=self.state.budget(None))
        return {**answer_dict(answer), "summary": answer_text(answer, SUMMARY_EVIDENCE)}

    def sparql(self, query: str, source: str | None = None) -> Any:
        """A read-only query's result as SPARQL JSON results (``head`` with ``results`` or
        ``boolean``); a CONSTRUCT or DESCRIBE as N-Triples text under ``triples``."""
        settings = self.state.settings
        reply = proxy_answer(
            self.state,
            self._metrics,
            text=query,
            dataset=QueryDataset((), ()),
            source=source,
            grant=None,
            caller=CALLER,
            service_url=settings.sparql_base_iri or BASE_IRI,
            asked="",
            accept="application/sparql-results+json, application/n-triples;q=0.9",
            client=None,
        )
        body = reply.body.decode("utf-8")
        truncated = any(name == "X-Kgmw-Truncated" for name, _ in reply.headers)
        if reply.content_type.startswith("application/sparql-results+json"):
            result: dict[str, Any] = json.loads(body)
        else:
            result = {"triples": body}
        result["source"] = self._graph(source).name
        result["truncated"] = truncated
        return result

    def neighbors(
        self,
        entity: str,
        direction: str = "both",
        limit: int | None = None,
        source: str | None = None,
    ) -> Any:
        """The triples around ``entity`` (an IRI or a label), each with its text."""
        if direction not in DIRECTIONS:
            raise BadRequest(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
        graph = self._graph(source)
        node = self._entity(graph, entity, source)
        found = graph.neighbors(node, direction=direction, limit=self._limit(limit))  # type: ignore[arg-type]
        texts = self._verbalizer(graph, source).triples(found)
        return {
            "entity": node.value,
            "triples": [triple_json(t, x) for t, x in zip(found, texts, strict=True)],
        }

    def paths(
        self,
        a: str,
        b: str,
        max_hops: int | None = None,
        limit: int | None = None,
        source: str | None = None,
    ) -> Any:
        """The simple paths between ``a`` and ``b`` (IRIs or labels), at most 3 hops."""
        if max_hops is not None and not 1 <= max_hops <= 3:
            raise BadRequest(f"max_hops must be 1 to 3, not {max_hops}")
        graph = self._graph(source)
        start, end = self._entity(graph, a, source), self._entity(graph, b, source)
        found = graph.paths(start, end, max_hops=max_hops, limit=self._limit(limit))
        verbalizer = self._verbalizer(graph, source)
        return {
            "a": start.value,
            "b": end.value,
            "paths": [path_json(p, verbalizer.path(p)) for p in found],
        }

    def link(self, text: str, limit: int | None = None, source: str | None = None) -> Any:
        """The entities ``text`` may name, best first."""
        linker = self.state.linker(source)
        return {"text": text, "entities": [entity_json(e) for e in linker.link(text, limit=limit)]}

    # -- resources --------------------------------------------------------------------
    def sources(self) -> Any:
        """The configured sources (without credentials), the default first."""
        return {"sources": [self.state.describe_source(n) for n in self.state.source_names()]}

    def profiles(self) -> Any:
        """The bundled source profiles by name, with what each declares."""
        listed = []
        for name in available_profiles():
            profile = load_profile(name)
            listed.append(
                {
                    "name": name,
                    "description": profile.description,
                    "dialect": profile.dialect,
                    "label_predicates": [p.value for p in profile.label_predicates],
                }
            )
        return {"profiles": listed}

    # -- helpers ----------------------------------------------------------------------
    def _graph(self, source: str | None) -> GraphOperations:
        return self.state.graph(source)

    def _entity(self, graph: GraphOperations, text: str, source: str | None) -> NamedNode:
        if looks_like_iri(text):
            return to_iri(text)
        best = self.state.linker(source).best(text)
        if best is None:
            raise NotFound(
                f"no entity in {graph.name!r} matches {text!r}",
                hint="try the link tool, or give an IRI",
            )
        return best.iri

    def _verbalizer(self, graph: GraphOperations, source: str | None) -> Verbalizer:
        return self.state.verbalizer(source)

    @staticmethod
    def _limit(limit: int | None) -> int | None:
        if limit is not None and limit < 1:
            raise BadRequest(f"limit must be at least 1, not {limit}")
        return limit

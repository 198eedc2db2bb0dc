"""Caller SPARQL for the integrations, under the same guard and limits as ``/sparql``.

The text goes to ``KnowledgeGraph.query`` with ``query_policy(settings)``: the guard
the proxy uses (``kg/sparql_guard.py``: read-only, size, nesting and operator limits,
``SERVICE`` only to ``sparql_service_allowlist``) on the canonical text that runs, the
proxy's ``timeout`` and its ``sparql_max_rows`` row cap.
"""

from __future__ import annotations

from middleware.config import Settings
from middleware.kg.base import KnowledgeGraph
from middleware.kg.open import query_policy
from middleware.serialize.sparql_results import write_result


def guarded_sparql(graph: KnowledgeGraph, settings: Settings, query: str) -> str:
    """``query``'s result as SPARQL JSON (CONSTRUCT and DESCRIBE: Turtle), with a note
    after a blank line when rows were cut; the guard's error for a refused query."""
    result = graph.query(
        query,
        timeout=settings.timeout,
        max_rows=settings.sparql_max_rows,
        policy=query_policy(settings),
        base_iri=settings.sparql_base_iri or None,
    )
    body = write_result(result, "turtle" if result.kind == "graph" else "json").decode()
    if result.truncated:
        body += f"\n\n(results cut at {settings.sparql_max_rows} rows: sparql_max_rows)"
    return body

"""Exact and folded label hits found by asking a graph, within a query budget.

For graphs that cannot be indexed in-process (SPARQL endpoints). The profile's
``label_lookup`` says how folded matches are found:

- ``scan``: one anchored regular expression per batch of mentions over the labels
  (``folded_pattern``): the same exact, alias and folded hits an index would give;
- ``search``: an exact lookup of all mentions in one query (an index join, fine on
  Wikidata), then the profile's search template for the mentions it missed, one query
  each, longest first, while the budget lasts.

Nothing here pulls a graph's whole label set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from middleware.kg.base import KnowledgeGraph, LabelRow
from middleware.text.folding import fold, folded_pattern
from middleware.text.label_index import Hit, classify

MAX_PATTERN = 16_000  # characters of one folded pattern (a batch of mentions)
ROWS_PER_QUERY = 2_000


@dataclass
class LookupReport:
    """How many queries a lookup sent and which mentions it had no budget left for."""

    queries: int = 0
    skipped: list[str] = field(default_factory=list)


def _batches(mentions: Sequence[str]) -> list[list[str]]:
    """Mentions grouped so that each group's pattern stays under ``MAX_PATTERN``."""
    groups: list[list[str]] = [[]]
    for mention in mentions:
        trial = groups[-1] + [mention]
        if groups[-1] and len(folded_pattern([fold(m) for m in trial])) > MAX_PATTERN:
            groups.append([mention])
        else:
            groups[-1] = trial
    return [g for g in groups if g]


def _collect(found: dict[str, list[Hit]], mentions: Sequence[str], rows: list[LabelRow]) -> None:
    by_key: dict[str, list[str]] = {}
    for mention in mentions:
        by_key.setdefault(fold(mention), []).append(mention)
    for row in rows:
        for mention in by_key.get(fold(row.text), []):
            hit = classify(mention, row)
            if hit is not None:
                found[mention].append(hit)


def queried_hits(
    graph: KnowledgeGraph, mentions: Sequence[str], *, max_queries: int
) -> tuple[dict[str, list[Hit]], LookupReport]:
    """Exact and folded hits for each mention (whitespace-normalized, longest first),
    in at most ``max_queries`` queries."""
    found: dict[str, list[Hit]] = {m: [] for m in mentions}
    report = LookupReport()
    unique = [m for m in dict.fromkeys(mentions) if fold(m)]
    if graph.profile.label_lookup == "scan":
        for batch in _batches(unique):
            if report.queries >= max_queries:
                report.skipped += batch
                continue
            pattern = folded_pattern([fold(m) for m in batch])
            report.queries += 1
            _collect(found, batch, graph.match_labels(pattern, limit=ROWS_PER_QUERY))
        return found, report
    if unique and max_queries > 0:
        report.queries += 1
        _collect(found, unique, graph.lookup_labels(unique, limit=ROWS_PER_QUERY))
    for mention in unique:
        if found[mention]:
            continue
        if report.queries >= max_queries:
            report.skipped.append(mention)
            continue
        report.queries += 1
        rows = [LabelRow(e.iri, e.label or "") for e in graph.search(mention, limit=20)]
        _collect(found, [mention], rows)
    return found, report

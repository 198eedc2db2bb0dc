"""Two-step pruning of matched base triples into the ground graph (no LLM involved).

The matched triples are grouped by subject entity. Step one keeps the ``k`` subjects
with the most matched triples, ``k`` being the number of distinct subjects the
pseudo-graph has: of several entities sharing a label, the most connected one wins.
Step two scores each kept subject by the mean cosine of its matched triples, drops
those under the threshold and orders the rest best first. Each subject's triples are
listed best match first.

>>> from pyoxigraph import NamedNode
>>> from middleware.kg.base import Triple
>>> from middleware.methods.collect import BaseTriple
>>> def m(s, o, score):
...     t = Triple(NamedNode(f"http://x/{s}"), NamedNode("http://x/p"), NamedNode(f"http://x/{o}"))
...     return Match(0, BaseTriple(t, f"{s} | p | {o}"), score)
>>> result = prune([m("a", "b", 0.9), m("a", "c", 0.8), m("d", "e", 0.95)], k=1, threshold=0.7)
>>> [(g.label, round(g.score, 2)) for g in result.kept], [g.label for g in result.unpopular]
([('a', 0.85)], ['d'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from middleware.kg.terms import Term, term_key
from middleware.methods.collect import BaseTriple


@dataclass(frozen=True)
class Match:
    """A base triple one query (a pseudo-triple, by index) found, with its cosine."""

    query: int
    base: BaseTriple
    score: float


@dataclass
class GroundEntity:
    """A subject entity and its matched triples, best first (one score per triple)."""

    subject: Term
    source: str | None
    label: str
    triples: list[tuple[BaseTriple, float]] = field(default_factory=list)
    first_seen: int = 0

    @property
    def count(self) -> int:
        return len(self.triples)

    @property
    def score(self) -> float:
        return sum(s for _, s in self.triples) / len(self.triples) if self.triples else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "entity": self.label,
            "iri": self.subject.value,
            "source": self.source,
            "matched_triples": self.count,
            "score": round(self.score, 4),
            "triples": [{"text": b.text, "score": round(s, 4)} for b, s in self.triples],
        }


@dataclass
class Pruning:
    """The ground graph (``kept``) and what each step dropped."""

    kept: list[GroundEntity]
    unpopular: list[GroundEntity]  # step one: outside the top k by matched triples
    below_threshold: list[GroundEntity]  # step two: mean cosine under the threshold

    def to_dict(self) -> dict[str, Any]:
        return {
            "kept": [g.to_dict() for g in self.kept],
            "dropped_unpopular": [g.label for g in self.unpopular],
            "dropped_below_threshold": [
                {"entity": g.label, "score": round(g.score, 4)} for g in self.below_threshold
            ],
        }


def group_by_subject(matches: Sequence[Match]) -> list[GroundEntity]:
    """Matched triples grouped by (source, subject); a triple found by several queries
    keeps its best score."""
    groups: dict[tuple[str | None, str], GroundEntity] = {}
    best: dict[tuple[str | None, tuple[str, str, str]], float] = {}
    for match in matches:
        triple = match.base.triple
        key = (triple.source, term_key(triple.subject))
        if key not in groups:
            label = match.base.text.split(" | ", 1)[0]
            groups[key] = GroundEntity(triple.subject, triple.source, label, first_seen=len(groups))
        fact = (triple.source, triple.key())
        if fact not in best:
            groups[key].triples.append((match.base, match.score))
            best[fact] = match.score
        elif match.score > best[fact]:
            best[fact] = match.score
            group = groups[key]
            group.triples = [
                (b, match.score if b.triple.key() == triple.key() else s) for b, s in group.triples
            ]
    for group in groups.values():
        group.triples.sort(key=lambda item: -item[1])
    return list(groups.values())


def prune(matches: Sequence[Match], *, k: int, threshold: float) -> Pruning:
    """Step one (popularity, top ``k`` by matched triples), then step two (mean cosine
    at least ``threshold``, best first)."""
    groups = group_by_subject(matches)
    by_count = sorted(groups, key=lambda g: (-g.count, -g.score, g.first_seen))
    popular, unpopular = by_count[: max(k, 0)], by_count[max(k, 0) :]
    confident = [g for g in popular if g.score >= threshold]
    below = [g for g in popular if g.score < threshold]
    confident.sort(key=lambda g: (-g.score, g.first_seen))
    return Pruning(confident, unpopular, below)

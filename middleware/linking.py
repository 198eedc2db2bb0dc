"""Entity linking: a mention to ranked graph entities.

Ranked by match kind (exact label, exact alias, case/diacritics-folded label, folded
alias, then fuzzy for typos), ties broken by degree (popularity). Local stores get
an in-memory label index built once per store; endpoints use the profile's search
template and the same ranking.

>>> from middleware.kg.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Titanic|directed_by|James Cameron\\nAmélie|in_language|French\\n", name="kb.txt")
>>> linker = EntityLinker(kg)
>>> [(e.label, e.match) for e in linker.link("titanic")]
[('Titanic', 'folded')]
>>> [(e.label, e.match) for e in linker.link("Amelie")]
[('Amélie', 'folded')]
>>> [(e.label, e.match) for e in linker.link("James Camron")]
[('James Cameron', 'fuzzy')]
"""

from __future__ import annotations

import re
import unicodedata
import weakref
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from pyoxigraph import NamedNode
from rapidfuzz import fuzz, process

from middleware.errors import BadRequest
from middleware.kg.base import Entity, KnowledgeGraph

_PUNCT = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[\w'’.-]+")
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "how",
        "did",
        "does",
        "do",
        "that",
        "this",
        "these",
        "those",
    ]
)
MAX_MENTION_CHARS = 500
# (score, match) per kind of hit; fuzzy scores are scaled below the folded ones.
_TIERS = {"exact": 1.0, "alias": 0.98, "folded": 0.95, "folded-alias": 0.93}


def fold(text: str) -> str:
    """Case-, diacritics- and punctuation-insensitive form of a label.

    >>> fold("  Amélie  Poulain's "), fold("E.T. the Extra-Terrestrial")
    ('amelie poulains', 'et the extraterrestrial')
    """
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACE.sub(" ", _PUNCT.sub("", stripped.casefold())).strip()


@dataclass
class _Hit:
    iri: NamedNode
    label: str
    match: str
    score: float


class LabelIndex:
    """Exact, folded and fuzzy lookup over every label and alias of a local store."""

    def __init__(self, rows: Iterable[tuple[NamedNode, str, bool]]) -> None:
        self.exact: dict[str, list[tuple[NamedNode, bool]]] = defaultdict(list)
        self.folded: dict[str, list[tuple[NamedNode, str, bool]]] = defaultdict(list)
        self.labels: dict[NamedNode, str] = {}
        for iri, label, is_alias in rows:
            self.exact[_SPACE.sub(" ", label).strip()].append((iri, is_alias))
            self.folded[fold(label)].append((iri, label, is_alias))
            if not is_alias and iri not in self.labels:
                self.labels[iri] = label
        self.folded.pop("", None)
        self._keys = list(self.folded)

    def __len__(self) -> int:
        return len(self.exact)

    def lookup(self, mention: str, *, fuzzy_cutoff: float, limit: int) -> list[_Hit]:
        hits: list[_Hit] = []
        for iri, is_alias in self.exact.get(mention, []):
            kind = "alias" if is_alias else "exact"
            hits.append(_Hit(iri, self.labels.get(iri, mention), kind, _TIERS[kind]))
        key = fold(mention)
        for iri, label, is_alias in self.folded.get(key, []):
            kind = "folded-alias" if is_alias else "folded"
            hits.append(_Hit(iri, self.labels.get(iri, label), kind, _TIERS[kind]))
        if not hits and key:
            for found_key, score, _ in process.extract(
                key, self._keys, scorer=fuzz.ratio, limit=limit * 3, score_cutoff=fuzzy_cutoff
            ):
                for iri, label, _alias in self.folded[found_key]:
                    hits.append(_Hit(iri, self.labels.get(iri, label), "fuzzy", 0.9 * score / 100))
        return hits


_INDEXES: weakref.WeakKeyDictionary[object, tuple[int, LabelIndex]] = weakref.WeakKeyDictionary()


class EntityLinker:
    """Links mentions to entities of one graph."""

    def __init__(
        self, graph: KnowledgeGraph, *, limit: int = 5, fuzzy_cutoff: float = 85.0
    ) -> None:
        self.graph = graph
        self.limit = limit
        self.fuzzy_cutoff = fuzzy_cutoff
        self._degrees: dict[NamedNode, int] = {}

    def index(self) -> LabelIndex | None:
        """The label index of a local store: built once per store version, then shared."""
        rows = getattr(self.graph, "label_rows", None)
        if rows is None:
            return None
        version = getattr(self.graph, "version", 0)
        cached = _INDEXES.get(self.graph)
        if cached is None or cached[0] != version:
            cached = (version, LabelIndex(rows()))
            _INDEXES[self.graph] = cached
        return cached[1]

    def link(self, mention: str, *, limit: int | None = None) -> list[Entity]:
        """Best entities for ``mention``, best first; an empty list when nothing matches."""
        text = _SPACE.sub(" ", mention).strip()
        if not text:
            raise BadRequest("cannot link an empty mention")
        if len(text) > MAX_MENTION_CHARS:
            raise BadRequest(
                f"mention of {len(text)} characters is longer than {MAX_MENTION_CHARS}"
            )
        limit = limit or self.limit
        index = self.index()
        hits = (
            index.lookup(text, fuzzy_cutoff=self.fuzzy_cutoff, limit=limit)
            if index is not None
            else self._search_hits(text, limit)
        )
        best: dict[NamedNode, _Hit] = {}
        for hit in hits:
            if hit.iri not in best or hit.score > best[hit.iri].score:
                best[hit.iri] = hit
        ranked = sorted(
            best.values(), key=lambda h: (-h.score, -self._degree(h.iri), h.label, h.iri.value)
        )
        return [
            Entity(h.iri, h.label, self.graph.name, score=round(h.score, 4), match=h.match)
            for h in ranked[:limit]
        ]

    def _search_hits(self, text: str, limit: int) -> list[_Hit]:
        """Candidates from the graph's search template, scored like index hits."""
        hits = []
        key = fold(text)
        for entity in self.graph.search(text, limit=max(limit * 4, 20)):
            label = entity.label or ""
            if label == text:
                hits.append(_Hit(entity.iri, label, "exact", _TIERS["exact"]))
            elif fold(label) == key:
                hits.append(_Hit(entity.iri, label, "folded", _TIERS["folded"]))
            else:
                score = fuzz.ratio(key, fold(label))
                hits.append(_Hit(entity.iri, label, "search", 0.9 * score / 100))
        return hits

    def _degree(self, iri: NamedNode) -> int:
        if iri not in self._degrees:
            self._degrees[iri] = self.graph.degree(iri)
        return self._degrees[iri]

    def spans(self, text: str, *, max_words: int = 6) -> list[tuple[str, Entity]]:
        """Entities whose label is written in ``text``: longest spans first, no overlaps.

        Only for local stores (it needs the label index); endpoints return nothing.
        A span is taken when it is several words, capitalised or in brackets, so
        common words that happen to be titles ("up", "her") are left alone.

        >>> from middleware.kg.local import LocalStore
        >>> kg = LocalStore(profile="metaqa")
        >>> _ = kg.load_text("Up|directed_by|Pete Docter\\nThe Matrix|directed_by|Lana Wachowski\\n", name="kb.txt")
        >>> [(m, e.label) for m, e in EntityLinker(kg).spans("who grew up watching the matrix and [Up]")]
        [('the matrix', 'The Matrix'), ('Up', 'Up')]
        """
        index = self.index()
        if index is None:
            return []
        words = list(_WORD.finditer(text))
        taken = [False] * len(words)
        found: list[tuple[int, str, Entity]] = []
        for size in range(min(max_words, len(words)), 0, -1):
            for first in range(len(words) - size + 1):
                if any(taken[first : first + size]):
                    continue
                start, end = words[first].start(), words[first + size - 1].end()
                span = text[start:end]
                bracketed = text[max(0, start - 1) : start] == "[" and text[end : end + 1] == "]"
                if not (size > 1 or bracketed or span[:1].isupper()) or len(fold(span)) < 2:
                    continue
                if size > 1 and all(
                    w.group(0).lower() in _STOPWORDS for w in words[first : first + size]
                ):
                    continue
                hits = (
                    [h for h in self.link(span) if h.match != "fuzzy"]
                    if fold(span) in index.folded
                    else []
                )
                if hits:
                    taken[first : first + size] = [True] * size
                    found.append((start, span, hits[0]))
        return [(span, entity) for _, span, entity in sorted(found, key=lambda f: f[0])]

    def best(self, mention: str) -> Entity | None:
        found = self.link(mention, limit=1)
        return found[0] if found else None

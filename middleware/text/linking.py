"""Entity linking: a mention to ranked graph entities, and the entities a text names.

Ranked by match kind (exact label, exact alias, case/diacritics/punctuation-folded
label, folded alias, then typo-tolerant), ties broken by degree (popularity), then
label and IRI. Graphs that can list their labels in-process (``capabilities.
label_index``) get an index built once per version (kept on disk beside a store's
data); others (SPARQL endpoints) are asked with batched label lookups
(``text/label_queries.py``) within ``max_queries`` per call. Exact, alias and folded matches are the same either way;
typo-tolerant ones differ (fuzzy ratio over the index, the profile's search on an
endpoint).

>>> from middleware.kg.backends.local import LocalStore
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
from collections.abc import Sequence

from pyoxigraph import NamedNode
from rapidfuzz import fuzz

from middleware.config.areas import TextSettings
from middleware.errors import BadRequest
from middleware.kg.base import SORT_WINDOW, Entity, KnowledgeGraph, LabelRow
from middleware.text.folding import fold, normalize_space
from middleware.text.label_index import Hit, LabelSearch, classify
from middleware.text.label_queries import LookupReport, queried_hits
from middleware.text.spans import Span, candidate_spans, select_spans
from middleware.text.stored_labels import label_index

MAX_MENTION_CHARS = 500
RANKING_QUERIES = 2  # an endpoint's degrees and display labels, one query each


class EntityLinker:
    """Links mentions to entities of one graph (safe to share between threads)."""

    def __init__(
        self,
        graph: KnowledgeGraph,
        *,
        limit: int = 5,
        fuzzy_cutoff: float = 85.0,
        max_queries: int = 8,
        variants: bool = True,
    ) -> None:
        self.graph = graph
        self.variants = variants  # name variants, where the graph has a label index
        self.limit = limit
        self.fuzzy_cutoff = fuzzy_cutoff
        self.max_queries = max(max_queries, RANKING_QUERIES + 1)

    @classmethod
    def from_settings(cls, graph: KnowledgeGraph, text: TextSettings) -> EntityLinker:
        """The linker every front end and method uses: ``link_limit``, ``fuzzy_cutoff``
        and ``link_max_queries`` of ``text`` (a source's settings)."""
        return cls(
            graph,
            limit=text.link_limit,
            fuzzy_cutoff=text.fuzzy_cutoff,
            max_queries=text.link_max_queries,
        )

    def index(self) -> LabelSearch | None:
        """The label index, for graphs that can list their labels in-process."""
        return label_index(self.graph) if self.graph.capabilities.label_index else None

    # -- hits ---------------------------------------------------------------------------
    def _hits(
        self, mentions: Sequence[str], report: LookupReport | None, *, variants: bool = True
    ) -> dict[str, list[Hit]]:
        index = self.index()
        if index is not None:
            wanted = self.variants and variants
            return {m: index.hits(m, variants=wanted) for m in mentions}
        found, done = queried_hits(
            self.graph, mentions, max_queries=self.max_queries - RANKING_QUERIES
        )
        if report is not None:
            report.queries += done.queries
            report.skipped += done.skipped
        return found

    def _typo_hits(self, text: str, limit: int) -> list[Hit]:
        index = self.index()
        if index is not None:
            return index.fuzzy(text, cutoff=self.fuzzy_cutoff, limit=limit)
        hits = []
        for entity in self.graph.search(text, limit=max(limit * 4, 20)):
            row = LabelRow(entity.iri, entity.label or "")
            hit = classify(text, row)
            score = 0.9 * fuzz.ratio(fold(text), fold(row.text)) / 100
            hits.append(hit or Hit(entity.iri, row.text, "search", score))
        return hits

    # -- ranking ------------------------------------------------------------------------
    def _rank(self, groups: dict[str, list[Hit]], limit: int) -> dict[str, list[Entity]]:
        """Each mention's hits ranked, with one degree count (by batch) and one label
        lookup for all the mentions.

        Only the hits that can be among a mention's first ``limit`` are read, and a
        degree only where a tie in match score must be broken: at scale a name variant
        is shared by hundreds of entities that an exact match outranks anyway."""
        contenders = {m: _contending(_best_each(hits), limit) for m, hits in groups.items()}
        iris = list(dict.fromkeys(h.iri for tiers in contenders.values() for t in tiers for h in t))
        if not iris:
            return {mention: [] for mention in groups}
        tied = list(
            dict.fromkeys(
                h.iri for tiers in contenders.values() for t in tiers if len(t) > 1 for h in t
            )
        )
        # past the window, all are hubs
        degrees = self.graph.degrees(tied, at_most=SORT_WINDOW) if tied else {}
        index = self.index()
        names: dict[NamedNode, str] = {}
        if index is not None:
            names = {i: index.labels[i] for i in iris if i in index.labels}
        else:
            names = {i: t for i, t in self.graph.labels(iris).items() if isinstance(i, NamedNode)}
        ranked: dict[str, list[Entity]] = {}
        for mention, tiers in contenders.items():
            order = sorted(
                (h for tier in tiers for h in tier),
                key=lambda h: (
                    -h.score,
                    -degrees.get(h.iri, 0),
                    names.get(h.iri, h.label),
                    h.iri.value,
                ),
            )
            ranked[mention] = [
                Entity(
                    h.iri,
                    names.get(h.iri, h.label),
                    self.graph.name,
                    score=round(h.score, 4),
                    match=h.match,
                )
                for h in order[:limit]
            ]
        return ranked

    # -- public -------------------------------------------------------------------------
    def link(
        self, mention: str, *, limit: int | None = None, typos: bool = True, variants: bool = True
    ) -> list[Entity]:
        """Best entities for ``mention``, best first; an empty list when nothing matches.
        With ``typos`` off, no typo-tolerant search follows when no label matches (it
        reads every label: a cost that grows with the graph); with ``variants`` off, no
        name variant is looked up (their table is built from every label on first use)."""
        text = _check(mention)
        if limit is not None and limit < 0:
            raise BadRequest(f"a link limit is a whole number of at least 1, got {limit}")
        limit = limit or self.limit
        hits = self._hits([text], None, variants=variants)[text]
        hits = hits or (self._typo_hits(text, limit) if typos else [])
        return self._rank({text: hits}, limit)[text]

    def best(self, mention: str) -> Entity | None:
        found = self.link(mention, limit=1)
        return found[0] if found else None

    def spans(
        self, text: str, *, max_words: int = 6, report: LookupReport | None = None
    ) -> list[tuple[str, Entity]]:
        """Entities whose label is written in ``text``: longest spans first, no overlaps.

        Exact, alias and folded matches, and on graphs with a label index the name
        variants of ``text/name_variants.py`` ("uk", "shakespeare"); ``text/spans.py``
        says which spans count. A trailing possessive ("aristotle's") is not part of the
        name unless a label says so. ``report`` receives the queries an endpoint lookup sent and the spans it
        had no budget left for.

        >>> from middleware.kg.backends.local import LocalStore
        >>> kg = LocalStore(profile="metaqa")
        >>> _ = kg.load_text("Up|directed_by|Pete Docter\\nThe Matrix|directed_by|Lana Wachowski\\n", name="kb.txt")
        >>> [(m, e.label) for m, e in EntityLinker(kg).spans("who grew up watching the matrix and [Up]")]
        [('the matrix', 'The Matrix'), ('Up', 'Up')]
        """
        return [
            (span, found[0])
            for span, found in self.span_entities(text, max_words=max_words, report=report)
        ]

    def span_entities(
        self,
        text: str,
        *,
        per_span: int = 1,
        max_words: int = 6,
        report: LookupReport | None = None,
    ) -> list[tuple[str, list[Entity]]]:
        """Like :meth:`spans`, with up to ``per_span`` entities for each span, best first
        (a short name may stand for several: "uk" for "UK £" and "United Kingdom").

        >>> from middleware.kg.backends.local import LocalStore
        >>> kg = LocalStore(profile="metaqa")
        >>> _ = kg.load_text("Hamlet|written_by|William Shakespeare\\n", name="kb.txt")
        >>> [(m, [e.label for e in es]) for m, es in EntityLinker(kg).span_entities("who is shakespeare's wife")]
        [("shakespeare's", ['William Shakespeare'])]
        """
        kept = self._kept_spans(text, max_words, report)
        ranked = self._rank({key: hits for _, key, hits in kept}, max(per_span, 1))
        return [(span.text, ranked[key]) for span, key, _ in kept]

    def spans_naming(self, text: str, entity: NamedNode, *, per_span: int = 1) -> list[str]:
        """The spans of :meth:`span_entities` whose ``per_span`` entities include
        ``entity``, in reading order. Only the spans with ``entity`` among their hits are
        ranked, none that has ``per_span`` entities or fewer, and none where match
        scores alone place ``entity`` in or out of its first ``per_span``: what masking
        a known topic needs, at a fraction of the degree lookups.

        >>> from middleware.kg.backends.local import LocalStore
        >>> kg = LocalStore(profile="metaqa")
        >>> _ = kg.load_text("Heat|directed_by|Michael Mann\\n", name="kb.txt")
        >>> EntityLinker(kg).spans_naming("who directed heat", kg.search("Heat")[0].iri)
        ['heat']
        """
        named, per_span = [], max(per_span, 1)  # as span_entities counts it
        for span, key, hits in self._kept_spans(text, 6, None):
            iris = dict.fromkeys(hit.iri for hit in hits)
            if entity not in iris:
                continue
            placed = True if len(iris) <= per_span else _placed_by_score(hits, entity, per_span)
            if placed is None:  # within a tie the degrees break
                placed = entity in {e.iri for e in self._rank({key: hits}, per_span)[key]}
            if placed:
                named.append(span.text)
        return named

    def _kept_spans(
        self, text: str, max_words: int, report: LookupReport | None
    ) -> list[tuple[Span, str, list[Hit]]]:
        """The spans :meth:`spans` keeps, each with the mention looked up and its hits."""
        candidates = candidate_spans(text, max_words=max_words)
        written = {c: normalize_space(c.text) for c in candidates}
        bare = {c: mention_key(c.text) for c in candidates}
        found = self._hits(list(dict.fromkeys([*written.values(), *bare.values()])), report)
        # the span as written when its label says so ("Schindler's List"), else without
        # a possessive ("jfk's": not the acronym of "John F. Kennedy School")
        keys = {
            c: written[c] if _named(found[written[c]]) or not found[bare[c]] else bare[c]
            for c in candidates
        }
        linked = [c for c in candidates if found[keys[c]]]
        # which spans are kept depends only on whether they have hits, so only the kept
        # ones are ranked (ranking reads the degrees of tied hits)
        kept = [span for span, _ in select_spans(linked, lambda c: found[keys[c]] or None)]
        return [(span, keys[span], found[keys[span]]) for span in kept]


def _best_each(hits: list[Hit]) -> list[Hit]:
    """Each entity's best hit, in the order the entities first come."""
    kept: dict[NamedNode, Hit] = {}
    for hit in hits:
        if hit.iri not in kept or hit.score > kept[hit.iri].score:
            kept[hit.iri] = hit
    return list(kept.values())


def _placed_by_score(hits: list[Hit], entity: NamedNode, limit: int) -> bool | None:
    """Whether ``entity`` is among the first ``limit`` of ``hits`` once ranked, where
    score alone decides: True when its tier of equal score and the tiers before it fit,
    False when the tiers before it fill the limit; None when the degrees that break its
    tier's tie decide.

    >>> e = [NamedNode(f"http://example.org/e{i}") for i in range(4)]
    >>> hits = [Hit(e[0], "a", "exact", 1.0)] + [Hit(i, "b", "variant", 0.5) for i in e[1:]]
    >>> [_placed_by_score(hits, e[0], 1), _placed_by_score(hits, e[1], 2)]
    [True, None]
    >>> [_placed_by_score(hits, e[1], 4), _placed_by_score(hits, e[1], 1)]
    [True, False]
    """
    before = 0
    for tier in _contending(_best_each(hits), limit):
        if entity in {hit.iri for hit in tier}:
            return True if before + len(tier) <= limit else None
        before += len(tier)
    return False


def _contending(hits: list[Hit], limit: int) -> list[list[Hit]]:
    """The hits that can be among the first ``limit`` once ranked, as tiers of equal
    score, best first: score ranks first, so a tier past the ``limit``-th hit cannot.

    >>> iri = NamedNode("http://example.org/e")
    >>> hits = [Hit(iri, "a", "variant", 0.5), Hit(iri, "b", "exact", 1.0)]
    >>> [[h.label for h in tier] for tier in _contending(hits, 1)]
    [['b']]
    """
    tiers: list[list[Hit]] = []
    for hit in sorted(hits, key=lambda h: -h.score):
        if tiers and tiers[-1][0].score == hit.score:
            tiers[-1].append(hit)
        elif sum(len(t) for t in tiers) >= limit:
            break
        else:
            tiers.append([hit])
    return tiers


_POSSESSIVE = re.compile(r"(?<=\w)['’]s?$")


def _named(hits: list[Hit]) -> bool:
    """Whether some hit is a label match, not just a name variant."""
    return any(hit.match != "variant" for hit in hits)


def mention_key(span: str) -> str:
    """A span without a trailing possessive, spaces normalized.

    >>> mention_key("Aristotle's"), mention_key("the Beatles'")
    ('Aristotle', 'the Beatles')
    """
    return _POSSESSIVE.sub("", normalize_space(span))


def _check(mention: str) -> str:
    text = normalize_space(mention)
    if not text:
        raise BadRequest("cannot link an empty mention")
    if len(text) > MAX_MENTION_CHARS:
        raise BadRequest(f"mention of {len(text)} characters is longer than {MAX_MENTION_CHARS}")
    return text

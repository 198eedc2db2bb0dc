"""Label search over every label of an in-process graph: exact, folded, variant, fuzzy.

``LabelSearch`` holds the lookups; ``LabelIndex`` keeps the rows in memory, built from
``graph.label_rows()`` (``text/stored_labels.py`` keeps them on disk instead). An entity's display label is its preferred label: the profile's language
first, then untagged, then the rest; ties by text.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode
from rapidfuzz import fuzz, process

from middleware.kg.base import LabelRow
from middleware.text.bigrams import Bigrams
from middleware.text.folding import fold, normalize_space
from middleware.text.name_variants import NameVariants, VariantLookup

# (score) per kind of hit; fuzzy scores are scaled below the folded ones.
# Name variants (``text/name_variants.py``) are guesses and rank below every label match.
TIERS = {"exact": 1.0, "alias": 0.98, "folded": 0.95, "folded-alias": 0.93, "variant": 0.8}


@dataclass
class Hit:
    """A candidate entity for a mention and how it matched."""

    iri: NamedNode
    label: str
    match: str
    score: float


def language_rank(language: str | None, wanted: str | None) -> int:
    """How well a label's language fits the profile's (lower is better)."""
    if wanted and language == wanted:
        return 0
    if language is None:
        return 1
    if wanted and language.split("-")[0] == wanted:
        return 2
    return 3


def classify(mention: str, row: LabelRow) -> Hit | None:
    """The hit ``row`` makes for ``mention``: exact or folded (alias or not), else None."""
    if normalize_space(row.text) == mention:
        kind = "alias" if row.alias else "exact"
    elif fold(row.text) == fold(mention):
        kind = "folded-alias" if row.alias else "folded"
    else:
        return None
    return Hit(row.entity, row.text, kind, TIERS[kind])


class LabelSearch(ABC):
    """Exact, folded, name-variant and fuzzy lookup over a graph's labels, whatever
    holds them: the rows under a whitespace-normalized text, under a folded text, the
    folded texts in their first order, and the variant table."""

    labels: Mapping[NamedNode, str]  # each entity's display label

    def __init__(self) -> None:
        self.damaged = False  # what holds the labels can no longer be read: build again
        self._bigrams: Bigrams | None = None  # built on the first typo-tolerant search
        self._fuzzy_keys: Sequence[str] = ()
        self._lock = threading.Lock()

    @abstractmethod
    def exact_rows(self, text: str) -> list[LabelRow]:
        """The rows whose whitespace-normalized text is ``text``, in their first order."""

    @abstractmethod
    def folded_rows(self, key: str) -> list[LabelRow]:
        """The rows whose folded text is ``key``, in their first order."""

    @abstractmethod
    def folded_keys(self) -> Sequence[str]:
        """Every distinct non-empty folded text, in the order first seen."""

    @property
    @abstractmethod
    def variants(self) -> VariantLookup:
        """The labels each name variant may stand for."""

    @abstractmethod
    def __len__(self) -> int:
        """How many distinct whitespace-normalized label texts there are."""

    def close(self) -> None:  # noqa: B027 (nothing to let go of, in memory)
        """Let go of what the index holds open (nothing, in memory)."""

    def fuzzy_choices(self, key: str, cutoff: float) -> Sequence[str]:
        """The folded texts that may reach ``cutoff`` against the folded ``key``, in
        their first order (``text/bigrams.py``): the character-pair lists are built on
        the first call, once however many threads call first."""
        with self._lock:
            if self._bigrams is None:
                self._fuzzy_keys = self.folded_keys()
                self._bigrams = Bigrams(self._fuzzy_keys)
        every = self._fuzzy_keys
        keys = self._bigrams.candidates(key, cutoff)
        return every if keys is None else [every[i] for i in keys]

    def prepare(self) -> None:
        """Derive the name variants now rather than on the first lookup that needs them
        (an index kept on disk keeps them there too)."""
        self.variants.labels("")

    def hits(self, mention: str, *, variants: bool = True) -> list[Hit]:
        """Exact and folded hits of a whitespace-normalized mention, then (unless
        ``variants`` is false) the labels it may be a short form or demonym of."""
        rows = self.exact_rows(mention) + self.folded_rows(fold(mention))
        found = [hit for row in rows if (hit := classify(mention, row)) is not None]
        if variants:
            for text in self.variants.labels(fold(mention)):
                for row in self.exact_rows(normalize_space(text)):
                    if not row.alias:
                        found.append(Hit(row.entity, row.text, "variant", TIERS["variant"]))
        return found

    def fuzzy(self, mention: str, *, cutoff: float, limit: int) -> list[Hit]:
        """Typo-tolerant hits (rapidfuzz ratio over folded labels), scored only over the
        labels that share enough character pairs with the mention to reach ``cutoff``
        (``text/bigrams.py``): the same hits as scoring every label."""
        key = fold(mention)
        if not key:
            return []
        choices = self.fuzzy_choices(key, cutoff)
        found = []
        for folded, score, _ in process.extract(
            key, choices, scorer=fuzz.ratio, limit=limit * 3, score_cutoff=cutoff
        ):
            for row in self.folded_rows(folded):
                found.append(Hit(row.entity, row.text, "fuzzy", 0.9 * score / 100))
        return found


def display_labels(rows: Iterable[LabelRow], language: str | None) -> dict[NamedNode, str]:
    """Each entity's preferred label: the profile's language first, then untagged, then
    the rest; ties by text (aliases are never display labels)."""
    best: dict[NamedNode, tuple[int, str]] = {}
    for row in rows:
        if not row.alias:
            rank = (language_rank(row.language, language), row.text)
            if row.entity not in best or rank < best[row.entity]:
                best[row.entity] = rank
    return {iri: text for iri, (_, text) in best.items()}


class LabelIndex(LabelSearch):
    """The label search held in memory, built from every label and alias of a graph."""

    def __init__(self, rows: Iterable[LabelRow], *, language: str | None = None) -> None:
        super().__init__()
        self.exact: dict[str, list[LabelRow]] = defaultdict(list)
        self.folded: dict[str, list[LabelRow]] = defaultdict(list)
        kept = []
        for row in rows:
            self.exact[normalize_space(row.text)].append(row)
            self.folded[fold(row.text)].append(row)
            kept.append(row)
        self.labels = display_labels(kept, language)
        self.folded.pop("", None)
        self._variants: NameVariants | None = None

    def exact_rows(self, text: str) -> list[LabelRow]:
        return self.exact.get(text, [])

    def folded_rows(self, key: str) -> list[LabelRow]:
        return self.folded.get(key, [])

    def folded_keys(self) -> Sequence[str]:
        return list(self.folded)

    @property
    def variants(self) -> NameVariants:
        """Name variants of every label, derived on first use."""
        if self._variants is None:
            self._variants = NameVariants(
                row.text for rows in self.exact.values() for row in rows if not row.alias
            )
        return self._variants

    def __len__(self) -> int:
        return len(self.exact)

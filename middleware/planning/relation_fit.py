"""Which relation a question asks about, and whether the evidence that supports an
answer holds it.

"What language is Heat in?" asks about ``in language``. When the only evidence
joining Heat to the answer is ``Heat | has genre | Crime``, the answer is supported by
a path, but not along the relation asked about: the graph does not hold Heat's
language. The question, its entity masked (``planning/masking.py``), is compared by
meaning with each relation of the graph asked as short questions, from either end
(``questions_for``: "what directed NE", "NE directed by what", ...); the relation with
the closest question is the one asked about. Short questions read far better than the
bare phrase ("directed NE"): on 200 MetaQA 1-hop dev questions the relation asked
about comes first for 170 against 43. The gap of a chain of evidence is how much
better the best relation reads than the best the chain holds (0 when it holds the
best); the calibration weighs it (``methods/calibration.py``).

The relations compared are those of the source's profile (its relation ontology), the
graph's own (its relation vocabulary, read once per version of the data, where the
graph lives in this process and has at most ``VOCABULARY_MAX``), any given at
construction (a path memory's) and those of the evidence at hand. Nothing carries over from one question to the next: the same
question over the same data reads the same gap, in a one-shot ``kgmw ask`` as in a
long-running service.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

import numpy as np
from pyoxigraph import NamedNode

from middleware.errors import EndpointError
from middleware.kg.base import KnowledgeGraph
from middleware.planning.masking import MASK, mask
from middleware.text.embeddings.encoders import Encoder, encode_groups, normalize
from middleware.text.verbalize import Verbalizer

# a graph with more relations is compared on its profile's and the evidence's only:
# each relation is encoded as 8 short questions once (about 6 s for FB15k-237's 237 on
# 2 cores), then read from the encoder's on-disk cache
VOCABULARY_MAX = 500


def questions_for(verbalizer: Verbalizer, predicate: str, forward: bool) -> list[str]:
    """Short questions that ask for the far end of ``predicate`` walked ``forward``
    from the question's entity (``NE``).

    >>> from middleware.kg.backends.local import LocalStore
    >>> v = Verbalizer(LocalStore(profile="metaqa"))
    >>> questions_for(v, "https://kgmw.dev/metaqa/relation/directed_by", True)
    ['what directed NE', 'NE directed by what', 'what is NE directed by', 'directed NE']
    """
    reading = verbalizer.relation(NamedNode(predicate), forward=forward)
    back = verbalizer.relation(NamedNode(predicate), forward=not forward)
    return short_questions(reading, back)


def short_questions(reading: str, back: str) -> list[str]:
    """Short questions for the far end of a relation read ``reading`` from the
    question's entity and ``back`` from the far end.

    >>> short_questions("spouse", "spouse of")
    ['what spouse of NE', 'NE spouse what', 'what is NE spouse', 'spouse of NE']
    """
    return [
        f"what {back} {MASK}",
        f"{MASK} {reading} what",
        f"what is {MASK} {reading}",
        f"{back} {MASK}",
    ]


class RelationFit:
    """Relation fit over one source (safe to share between threads). Each relation's
    short questions are encoded once; the relations compared are kept as one matrix,
    and the last few questions read, so the chains of one answer cost one product."""

    QUESTIONS_KEPT = 64  # masked questions whose vectors are kept
    MATRICES_KEPT = 8  # sets of compared relations kept stacked (up to 6 MB each at 500)

    def __init__(
        self,
        encoder: Callable[[], Encoder],
        verbalizer: Verbalizer,
        *,
        relations: Iterable[str] = (),
    ) -> None:
        self.encoder = encoder  # opened on first use
        self.verbalizer = verbalizer
        self.given = frozenset(set(verbalizer.relations.iris()) | set(relations))
        self._vectors: dict[str, np.ndarray] = {}  # a relation's questions, both ways
        self._stacked: dict[frozenset[str], tuple[list[str], np.ndarray, np.ndarray]] = {}
        self._questions: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def compared(self, held: Iterable[str] = ()) -> set[str]:
        """The relations a question is read against: the given ones, the graph's own
        and ``held`` (the evidence's)."""
        return set(self.given) | graph_relations(self.verbalizer.graph) | set(held)

    def _matrix(self, compared: frozenset[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The relations ``compared`` (sorted), their questions' rows stacked, and where
        each relation's rows start."""
        with self._lock:
            if compared in self._stacked:
                return self._stacked[compared]
            missing = sorted(p for p in compared if p not in self._vectors)
            if missing:
                asked = [
                    questions_for(self.verbalizer, p, True)
                    + questions_for(self.verbalizer, p, False)
                    for p in missing
                ]
                encoded = encode_groups(self.encoder(), asked)
                self._vectors.update(zip(missing, encoded, strict=True))
            names = sorted(compared)
            blocks = [self._vectors[p] for p in names]
            starts = np.cumsum([0] + [len(b) for b in blocks[:-1]])
            stacked = (names, np.concatenate(blocks), starts)
            if len(self._stacked) >= self.MATRICES_KEPT:
                self._stacked.clear()
            self._stacked[compared] = stacked
            return stacked

    def _question(self, masked: str) -> np.ndarray:
        with self._lock:
            found = self._questions.get(masked)
        if found is None:
            found = normalize(self.encoder().encode([masked]))[0]
            with self._lock:
                if len(self._questions) >= self.QUESTIONS_KEPT:
                    self._questions.clear()
                self._questions[masked] = found
        return found

    def ranking(
        self, question: str, span: str, seen: Iterable[str] = ()
    ) -> list[tuple[str, float]]:
        """The relations (IRIs) by how well they read as what the question asks about,
        best first, with their cosine."""
        compared = frozenset(self.compared(seen))
        if not compared:
            return []
        names, matrix, starts = self._matrix(compared)
        best = np.maximum.reduceat(matrix @ self._question(mask(question, span)), starts)
        return sorted(
            ((name, float(score)) for name, score in zip(names, best, strict=True)),
            key=lambda item: (-item[1], item[0]),
        )

    def gap(self, question: str, span: str, held: Iterable[str]) -> float:
        """How much better the best relation reads as the question than the best of
        ``held`` (0 when one of them is the best)."""
        held = set(held)
        ranking = self.ranking(question, span, held)
        if not ranking or ranking[0][0] in held:
            return 0.0
        holds = max((score for iri, score in ranking if iri in held), default=-1.0)
        return max(ranking[0][1] - holds, 0.0)


def graph_relations(graph: KnowledgeGraph | None) -> set[str]:
    """The IRIs of ``graph``'s relations, where it lives in this process (its
    predicates are read once per version and kept) and has at most ``VOCABULARY_MAX``.
    An endpoint is not asked: listing a large one's predicates is a scan that may run
    to its timeout, on every answer that failed; its questions are read on the
    profile's and the evidence's relations."""
    if graph is None or not graph.capabilities.in_process:
        return set()
    try:
        vocabulary = graph.relation_vocabulary()
    except EndpointError:  # an in-process engine's own failure: read as an endpoint's
        return set()
    if vocabulary is None or len(vocabulary) > VOCABULARY_MAX:
        return set()
    return {p.value for p in vocabulary}

"""Questions about a relation the source does not hold at all.

"Who is the spouse of Michael Mann?" over a film graph: the graph has no spouse
relation, so any answer its evidence supports comes along another relation (his
films). The relation gap (``relation_fit.py``) cannot see this: it compares the
relations the source knows, and the best of those is still a film relation.

The relations the project's profiles name (every ``ontologies/*-relations.owl``) and
relations many graphs hold (``world_relations.py``: spouse, capital, budget, ...) serve
as foils. A foil counts only where the question names it: some run of one to three of
its words reads like the foil's name (``NAMED``: "married to" and "spouse"; "made"
names no foil). Each foil and each relation the source knows is asked as the same
short questions, from either end (``relation_fit.short_questions``); a foil whose
questions read like those of a known relation (``NEAR``: "director" beside "directed
by") stands for it and is left out. When the question, its entity masked, reads
closer to a named foil that is left than to every known relation, by at least the
``answer_foreign_margin`` setting, it asks for something the source does not hold.

The relations known are the profile's (its relation ontology) plus the answer's own
evidence: never those of earlier answers, so the check reads a question the same
whatever was asked before. Nothing is read where a relation of the evidence is named
by a code (``p19``: ``opaque``), nor with an encoder that reads words, not meaning
(``hash``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from pyoxigraph import NamedNode

from middleware.kg.relations import RelationInfo, load_relations
from middleware.planning.masking import mask
from middleware.planning.mentions import word_sequences
from middleware.planning.relation_fit import RelationFit, short_questions
from middleware.planning.world_relations import WORLD_RELATIONS
from middleware.support.resources import resource_dir
from middleware.text.embeddings.encoders import normalize

NEAR = 0.7  # a foil whose short questions read this close to a known relation's is one
NAMED = 0.7  # a foil counts only where some words of the question read this close to it
WORLD_IRI = "https://kgmw.dev/world-relation/"  # names the foils of WORLD_RELATIONS


@dataclass(frozen=True)
class ForeignRead:
    """How much closer the question reads to a foil than to every known relation."""

    margin: float  # the best named foil's cosine minus the best known relation's
    foil: str  # the foil's name ("spouse")
    closest: str  # the known relation that reads best, as read from the question's entity

    def why(self) -> str:
        return (
            f"the question asks for {self.foil!r}, and no relation of the evidence or "
            f"known for this source reads like it (closest: {self.closest!r})"
        )


@cache
def shipped_foils() -> tuple[RelationInfo, ...]:
    """Every relation the shipped relation ontologies describe and every one of
    ``WORLD_RELATIONS``, one per name."""
    found: dict[str, RelationInfo] = {}
    for path in sorted(Path(resource_dir("ontologies")).glob("*-relations.owl")):
        catalog = load_relations(path)
        for iri in catalog.iris():
            info = catalog.get(iri)
            found.setdefault(info.label.lower(), info)
    for label, inverse in WORLD_RELATIONS:
        iri = f"{WORLD_IRI}{label.replace(' ', '_')}"
        found.setdefault(label.lower(), RelationInfo(iri, label, inverse_label=inverse))
    return tuple(found[name] for name in sorted(found))


class ForeignRelations:
    """Reads questions against the foils, beside one source's ``RelationFit``."""

    def __init__(self, fit: RelationFit, foils: Iterable[RelationInfo] | None = None) -> None:
        self.fit = fit
        self._foils = list(shipped_foils() if foils is None else foils)
        self._foil_rows: list[np.ndarray] | None = None
        self._foil_names: np.ndarray | None = None  # each foil's two readings, bare
        self._own: dict[str, np.ndarray] = {}  # apart from the fit's: the gap compares those
        self._lock = threading.Lock()

    def _encode(self, readings: list[tuple[str, str]]) -> list[np.ndarray]:
        """Each relation's short questions, read forward (the first four rows), then
        backward, from its two readings (forward, backward)."""
        if not readings:
            return []
        asked = [short_questions(f, b) + short_questions(b, f) for f, b in readings]
        rows = normalize(self.fit.encoder().encode([q for qs in asked for q in qs]))
        size = len(asked[0])
        return [rows[i * size : (i + 1) * size] for i in range(len(readings))]

    def _foils_encoded(self) -> tuple[list[np.ndarray], np.ndarray]:
        """Each foil's short questions, and its readings (two rows a foil)."""
        with self._lock:
            if self._foil_rows is None or self._foil_names is None:
                readings = [(f.reading(True), f.reading(False)) for f in self._foils]
                self._foil_rows = self._encode(readings)
                names = [name for pair in readings for name in pair]
                self._foil_names = normalize(self.fit.encoder().encode(names))
            return self._foil_rows, self._foil_names

    def _named(self, masked: str) -> np.ndarray:
        """How closely some run of one to three words of the question reads like each
        foil (0 for a question of function words only)."""
        _, names = self._foils_encoded()
        sequences = word_sequences(masked)
        if not sequences:
            return np.zeros(len(self._foils))
        closest = (normalize(self.fit.encoder().encode(sequences)) @ names.T).max(axis=0)
        return np.asarray(np.maximum(closest[0::2], closest[1::2]))

    def _own_encoded(self, predicates: Iterable[str]) -> dict[str, np.ndarray]:
        verbalizer = self.fit.verbalizer
        wanted = sorted(set(predicates))
        with self._lock:
            missing = [p for p in wanted if p not in self._own]
            readings = [
                (
                    verbalizer.relation(NamedNode(p), forward=True),
                    verbalizer.relation(NamedNode(p), forward=False),
                )
                for p in missing
            ]
            self._own.update(zip(missing, self._encode(readings), strict=True))
            return {p: self._own[p] for p in wanted}

    def read(self, question: str, span: str, held: Iterable[str] = ()) -> ForeignRead | None:
        """How the question, ``span`` masked, reads against the foils it names and
        against the relations the source knows (the ``RelationFit``'s own, and
        ``held``: the evidence's). None when there is nothing to compare: no relation
        known, no named foil left, a relation of the evidence named by a code, or an
        encoder without a sense of meaning."""
        held = set(held)
        if self.fit.encoder().name.startswith("hash"):
            return None
        verbalizer = self.fit.verbalizer
        if any(opaque(verbalizer.relation(NamedNode(p))) for p in held):
            return None
        own = self._own_encoded(self.fit.given | held)
        if not own:
            return None
        masked = mask(question, span)
        query = normalize(self.fit.encoder().encode([masked]))[0]
        scores = {p: float((rows @ query).max()) for p, rows in own.items()}
        closest = max(sorted(scores), key=lambda p: scores[p])
        known_best = scores[closest]
        questions = np.concatenate(list(own.values()))
        best_foil, foil_best = "", -1.0
        rows, _ = self._foils_encoded()
        named = self._named(masked)
        for info, encoded, how_named in zip(self._foils, rows, named, strict=True):
            if how_named < NAMED:
                continue  # the question's words do not name it
            if info.iri in own or float((encoded @ questions.T).max()) >= NEAR:
                continue  # the source holds it, or a relation that reads like it
            score = float((encoded @ query).max())
            if score > foil_best:
                best_foil, foil_best = info.label, score
        if not best_foil:
            return None
        forward = float((own[closest][:4] @ query).max()) >= scores[closest]
        reading = self.fit.verbalizer.relation(NamedNode(closest), forward=forward)
        return ForeignRead(round(foil_best - known_best, 4), best_foil, reading)


def opaque(name: str) -> bool:
    """Whether a relation's name is a code, not words (``p19``, ``bp``): nothing to read.

    >>> opaque("p19"), opaque("bp"), opaque("birth place"), opaque("in language")
    (True, True, False, False)
    """
    words = name.split()
    return any(c.isdigit() for c in name) or not any(len(w) >= 3 for w in words)


_BESIDE: weakref.WeakKeyDictionary[RelationFit, ForeignRelations] = weakref.WeakKeyDictionary()
_BESIDE_LOCK = threading.Lock()


def foreign_for(fit: RelationFit) -> ForeignRelations:
    """The foils beside ``fit``, made once per ``RelationFit`` (their encoding is kept)."""
    with _BESIDE_LOCK:
        found = _BESIDE.get(fit)
        if found is None:
            found = _BESIDE[fit] = ForeignRelations(fit)
        return found

"""Questions about a relation the source does not hold at all.

"Who is the spouse of Michael Mann?" over a film graph: the graph has no spouse
relation, so any answer its evidence supports comes along another relation (his
films). The relation gap (``relation_fit.py``) cannot see this: it compares the
relations the source knows, and the best of those is still a film relation.

The relations the project's profiles name (every ``ontologies/*-relations.owl``) and
relations many graphs hold (``world_relations.py``: spouse, capital, budget, ...) serve
as foils. Each foil and each relation the source knows is asked as the same short
questions, from either end (``relation_fit.short_questions``). A foil whose questions
read like those of a known relation (``NEAR``: "director" beside "directed by") stands
for it and is left out. When the question, its entity masked, reads closer to a
remaining foil than to every known relation, by at least the ``answer_foreign_margin``
setting, it asks for something the source does not hold.

The relations known are fixed per source (its profile's, its path memory's) plus the
answer's own evidence: never those of earlier answers, so a question reads the same
whatever was asked before. Nothing is read where a relation of the evidence has no
name of its own (an IRI such as ``ex:P19``: nothing to compare), nor with an encoder
that reads words, not meaning (``hash``).
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
from middleware.planning.relation_fit import RelationFit, short_questions
from middleware.planning.world_relations import WORLD_RELATIONS
from middleware.support.resources import resource_dir
from middleware.text.embeddings.encoders import normalize

NEAR = 0.7  # a foil whose short questions read this close to a known relation's is one
WORLD_IRI = "https://kgmw.dev/world-relation/"  # names the foils of WORLD_RELATIONS

Key = tuple[str, bool]  # a relation's IRI and the direction it is read in


@dataclass(frozen=True)
class ForeignRead:
    """How much closer the question reads to a foil than to every known relation."""

    margin: float  # the best foil's cosine minus the best known relation's (or name's)
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

    def _foils_encoded(self) -> list[np.ndarray]:
        with self._lock:
            if self._foil_rows is None:
                self._foil_rows = self._encode(
                    [(f.reading(True), f.reading(False)) for f in self._foils]
                )
            return self._foil_rows

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
        """How the question, ``span`` masked, reads against the foils and against the
        relations the source knows (its profile's, its memory's, and ``held``: the
        evidence's). None when there is nothing to compare: no relation known, no foil
        of its own, a relation of the evidence without a name, or an encoder without a
        sense of meaning."""
        held = set(held)
        if self.fit.encoder().name.startswith("hash"):
            return None
        if any(not self.fit.verbalizer.named(NamedNode(p)) for p in held):
            return None
        own = self._own_encoded(self.fit.given | held)
        if not own:
            return None
        query = normalize(self.fit.encoder().encode([mask(question, span)]))[0]
        scores = {p: float((rows @ query).max()) for p, rows in own.items()}
        closest = max(sorted(scores), key=lambda p: scores[p])
        known_best = scores[closest]
        questions = np.concatenate(list(own.values()))
        best_foil, foil_best = "", -1.0
        for info, encoded in zip(self._foils, self._foils_encoded(), strict=True):
            score = float((encoded @ query).max())
            if info.iri in own or float((encoded @ questions.T).max()) >= NEAR:
                continue  # the source holds it, or a relation that reads like it
            if score > foil_best:
                best_foil, foil_best = info.label, score
        if not best_foil:
            return None
        forward = float((own[closest][:4] @ query).max()) >= scores[closest]
        reading = self.fit.verbalizer.relation(NamedNode(closest), forward=forward)
        return ForeignRead(round(foil_best - known_best, 4), best_foil, reading)


_BESIDE: weakref.WeakKeyDictionary[RelationFit, ForeignRelations] = weakref.WeakKeyDictionary()
_BESIDE_LOCK = threading.Lock()


def foreign_for(fit: RelationFit) -> ForeignRelations:
    """The foils beside ``fit``, made once per ``RelationFit`` (their encoding is kept)."""
    with _BESIDE_LOCK:
        found = _BESIDE.get(fit)
        if found is None:
            found = _BESIDE[fit] = ForeignRelations(fit)
        return found

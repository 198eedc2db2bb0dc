"""Questions about a relation the source does not hold at all.

"Who is the spouse of Michael Mann?" over a film graph: the graph has no spouse
relation, so any answer its evidence supports comes along another relation (his
films). The relation gap (``relation_fit.py``) cannot see this: it compares the
relations the source knows, and the best of those is still a film relation.

The relations the project's profiles name (every ``ontologies/*-relations.owl``) and
relations many graphs hold (``world_relations.py``: spouse, capital, budget, ...) serve
as foils. Each foil is asked
as the same short questions as the source's own relations. A foil that reads like one
of the source's own relations ("director" beside "directed by": ``NEAR``) stands for
it and is left out. When the question reads clearly closer to a remaining foil than to
every relation the source knows (by at least the ``answer_foreign_margin`` setting),
the question asks for something the source does not hold.
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
from middleware.planning.relation_fit import RelationFit, questions_for, short_questions
from middleware.planning.world_relations import WORLD_RELATIONS
from middleware.support.resources import resource_dir
from middleware.text.embeddings.encoders import normalize

NEAR = 0.7  # a foil whose questions read this close to an own relation's stands for it
WORLD_IRI = "https://kgmw.dev/world-relation/"  # names the foils of WORLD_RELATIONS


@dataclass(frozen=True)
class ForeignRead:
    """How much closer the question reads to a foil than to every own relation."""

    margin: float  # the best foil's cosine minus the best own relation's
    foil: str  # the foil's name ("spouse")
    closest: str  # the own relation that reads best, as read from the question's entity

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
        self._vectors: list[tuple[RelationInfo, np.ndarray]] | None = None
        self._own: dict[tuple[str, bool], np.ndarray] = {}
        self._lock = threading.Lock()

    def _foil_vectors(self) -> list[tuple[RelationInfo, np.ndarray]]:
        with self._lock:
            if self._vectors is None:
                asked = [
                    short_questions(info.reading(forward), info.reading(not forward))
                    for info in self._foils
                    for forward in (True, False)
                ]
                flat = [q for qs in asked for q in qs]
                rows = normalize(self.fit.encoder().encode(flat)) if flat else np.zeros((0, 1))
                size = len(asked[0]) if asked else 0
                self._vectors = [
                    (self._foils[i // 2], rows[i * size : (i + 1) * size])
                    for i in range(len(asked))
                ]
            return self._vectors

    def _own_vectors(self, predicates: Iterable[str]) -> list[tuple[tuple[str, bool], np.ndarray]]:
        """The short questions of each of ``predicates`` both ways, encoded once (kept
        apart from the ``RelationFit``'s, whose relations the relation gap compares)."""
        keys = [(p, forward) for p in sorted(set(predicates)) for forward in (True, False)]
        with self._lock:
            missing = [k for k in keys if k not in self._own]
            if missing:
                asked = [questions_for(self.fit.verbalizer, p, forward) for p, forward in missing]
                rows = normalize(self.fit.encoder().encode([q for qs in asked for q in qs]))
                size = len(asked[0])
                for i, key in enumerate(missing):
                    self._own[key] = rows[i * size : (i + 1) * size]
            return [(k, self._own[k]) for k in keys]

    def read(self, question: str, span: str, held: Iterable[str] = ()) -> ForeignRead | None:
        """How the question, ``span`` masked, reads against the foils and against the
        relations the source knows: its ``RelationFit``'s and ``held`` (the evidence's,
        the graph's own list). None when it knows none, or no foil is left."""
        own_keys = self._own_vectors(self.fit.known() | set(held))
        if not own_keys:
            return None
        own_iris = {iri for (iri, _), _ in own_keys}
        own = np.concatenate([rows for _, rows in own_keys])
        query = normalize(self.fit.encoder().encode([mask(question, span)]))[0]
        own_scores = own @ query
        best_row = int(np.argmax(own_scores))
        (best_iri, forward), _ = own_keys[best_row // len(own_keys[0][1])]
        best_foil, best_score = "", -1.0
        for info, rows in self._foil_vectors():
            if info.iri in own_iris or float((rows @ own.T).max()) >= NEAR:
                continue  # the source holds it, or a relation that reads like it
            score = float((rows @ query).max())
            if score > best_score:
                best_foil, best_score = info.label, score
        if not best_foil:
            return None
        closest = self.fit.verbalizer.relation(NamedNode(best_iri), forward=forward)
        return ForeignRead(round(best_score - float(own_scores[best_row]), 4), best_foil, closest)


_BESIDE: weakref.WeakKeyDictionary[RelationFit, ForeignRelations] = weakref.WeakKeyDictionary()
_BESIDE_LOCK = threading.Lock()


def foreign_for(fit: RelationFit) -> ForeignRelations:
    """The foils beside ``fit``, made once per ``RelationFit`` (their encoding is kept)."""
    with _BESIDE_LOCK:
        found = _BESIDE.get(fit)
        if found is None:
            found = _BESIDE[fit] = ForeignRelations(fit)
        return found

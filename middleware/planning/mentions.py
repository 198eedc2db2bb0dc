"""Which relations a question names, by its short word sequences.

A sentence encoder reads a whole question as a bag of meanings: "who starred in the
movies written by NE" reads close to any path whose phrase holds "directed", because
"movies" does. Read one to three words at a time, the question names ``starring``
("starred in") and ``written by`` ("written by") outright and ``directed by`` only
weakly. A plan that leaves out a relation the question names is then less likely:
``coverage`` says how much.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np
from pyoxigraph import NamedNode

from middleware.kg.walks import RelationPath
from middleware.planning.masking import MASK
from middleware.text.embeddings.encoders import Encoder, normalize
from middleware.text.spans import STOPWORDS
from middleware.text.verbalize import Verbalizer

NAMED = 0.8  # a relation is named when a word sequence reads this close to a reading
MISSED = 0.5  # the factor per named relation a plan leaves out
FUNCTION_WORDS = STOPWORDS | {"as", "been", "being", "from", "her", "his", "it", "its", "their"}
WORD = re.compile(r"[\w'-]+")


def word_sequences(masked: str, longest: int = 3) -> list[str]:
    """The question's sequences of 1 to ``longest`` words that are not all function
    words (the topic's mask left out).

    >>> word_sequences("who starred in NE")
    ['starred', 'starred in', 'who starred', 'who starred in']
    """
    words = [w.lower() for w in WORD.findall(masked) if w != MASK]
    found = set()
    for n in range(1, longest + 1):
        for i in range(len(words) - n + 1):
            part = words[i : i + n]
            if not all(w in FUNCTION_WORDS for w in part):
                found.add(" ".join(part))
    return sorted(found)


class RelationMentions:
    """How closely a question names each relation (either reading), cached by text."""

    def __init__(self, encoder: Encoder, verbalizer: Verbalizer, cache: int = 50_000) -> None:
        self.encoder = encoder
        self.verbalizer = verbalizer
        self._vectors: dict[str, np.ndarray] = {}
        self._cache = cache
        self._lock = threading.Lock()

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
            if missing:
                if len(self._vectors) + len(missing) > self._cache:
                    self._vectors.clear()  # then every text asked for is missing
                    missing = list(dict.fromkeys(texts))
                rows = normalize(self.encoder.encode(missing))
                self._vectors.update(zip(missing, rows, strict=True))
            return np.stack([self._vectors[t] for t in texts])

    def named(self, masked: str, predicates: Sequence[NamedNode]) -> dict[NamedNode, float]:
        """Each predicate's closest reading to any word sequence of the question."""
        sequences = word_sequences(masked)
        if not sequences or not predicates:
            return dict.fromkeys(predicates, 0.0)
        chunks = self._encode(sequences)
        found = {}
        for predicate in predicates:
            readings = [
                self.verbalizer.relation(predicate, forward=True),
                self.verbalizer.relation(predicate, forward=False),
            ]
            found[predicate] = float((chunks @ self._encode(readings).T).max())
        return found

    def coverage(self, path: RelationPath, named: dict[NamedNode, float]) -> float:
        """``MISSED`` to the power of the relations the question names (``NAMED``)
        that the path leaves out."""
        on_path = {p for p, _ in path}
        left_out = sum(1 for p, v in named.items() if v >= NAMED and p not in on_path)
        return float(MISSED**left_out)

"""How well a relation path reads like the question: the ranking behind the walk's cap.

The measure the learned planner's vote blends in: the relation path as a phrase that
ends at the masked topic (``planning/relpaths.py``), its cosine to the masked question,
plus a per-hop prior for short paths (zero-shot planning reads paths as short
questions instead: ``planning/path_reading.py``). The walk (``method.py``) and the instruction-dataset export
(``dataset.py``) rank options with the same reader, so a training example offers what
the walk would. Phrases are encoded once per reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from middleware.kg.walks import RelationPath
from middleware.methods.ksl.offer import Scorer
from middleware.planning.masking import mask
from middleware.planning.relpaths import LENGTH_PRIOR, phrase
from middleware.text.embeddings.encoders import Encoder, normalize
from middleware.text.verbalize import Verbalizer


def hop_prior(hops: int) -> float:
    """The phrase reading's preference for short paths, extended past 3 hops.

    >>> [round(hop_prior(n), 2) for n in (1, 2, 3, 4)]
    [0.0, -0.06, -0.12, -0.18]
    """
    return LENGTH_PRIOR.get(hops, LENGTH_PRIOR[3] - 0.06 * (hops - 3))


class PathReader:
    """Scores relation paths against questions with one encoder, caching phrase vectors."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self._phrases: dict[str, Any] = {}  # a relation path's phrase → its vector

    def scorer(self, question: str, span: str, verbalizer: Verbalizer) -> Scorer:
        """How well relation paths from the entity ``span`` names read like ``question``;
        the question is encoded on first use."""
        masked = mask(question, span)
        asked: list[Any] = []

        def score(paths: Sequence[RelationPath]) -> list[float]:
            if not asked:
                asked.append(normalize(self.encoder.encode([masked]))[0])
            phrases = [phrase(p, verbalizer) for p in paths]
            missing = list(dict.fromkeys(t for t in phrases if t not in self._phrases))
            if missing:
                vectors = normalize(self.encoder.encode(missing))
                self._phrases.update(zip(missing, vectors, strict=True))
            return [
                float(np.dot(asked[0], self._phrases[t])) + hop_prior(len(p))
                for t, p in zip(phrases, paths, strict=True)
            ]

        return score

"""How well each relation path from a topic reads as the question: the zero-shot score.

A path is asked as the short questions that ``relation_fit.short_questions`` makes of a
relation, read along the whole path: from its answer back to the topic ("what wrote
directed NE") and from the topic out ("NE directed written by what"). Its score is
their mean similarity to the masked question, plus a prior per hop count. On 300 MetaQA
dev questions (fold 0, seed 11) this put the right path first more often than the
path's bare phrase ("directed NE"), most of all on 1-hop questions.

A question that asks for the topic's peers ("which films share the director of NE",
"who starred together with NE") is answered by a path that goes out and straight back
over one relation (``directed by → directed by⁻¹``); an encoder reads such a question
as close to the one relation it names, so the path gets ``PEER_BONUS`` when the
question has a word of sharing and loses it when not.

>>> asks_for_peers("which films share the same director as NE"), asks_for_peers("who directed NE")
(True, False)
>>> from pyoxigraph import NamedNode
>>> d = NamedNode("http://x/directed_by")
>>> goes_out_and_back(((d, True), (d, False))), goes_out_and_back(((d, True),))
(True, False)
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from middleware.kg.walks import RelationPath
from middleware.planning.relation_fit import short_questions
from middleware.planning.relpaths import path_key, phrase
from middleware.text.embeddings.encoders import Encoder, normalize
from middleware.text.verbalize import Verbalizer

# added to a path's score per hop count: a longer path must read better to win
# (chosen on MetaQA dev, fold 0, seed 11, with the two constants below)
QUESTION_PRIOR = {1: 0.0, 2: -0.08, 3: -0.12}
PEER_BONUS = 0.08
# words that ask for what shares something with the topic (co-star, co-wrote, ...)
PEER_WORDS = re.compile(
    r"\b(same|also|together|shares?|shared|sharing|co-\w+|costars?|costarred)\b", re.IGNORECASE
)
KEPT_PATHS = 50_000  # paths whose questions' vectors are kept


def asks_for_peers(question: str) -> bool:
    """Whether ``question`` asks for what shares something with its topic."""
    return PEER_WORDS.search(question) is not None


def goes_out_and_back(path: RelationPath) -> bool:
    """Whether ``path`` takes a step and straight back over the same relation."""
    return any(a[0] == b[0] and a[1] != b[1] for a, b in pairwise(path))


def path_questions(path: RelationPath, verbalizer: Verbalizer) -> list[str]:
    """The short questions that ask for the far end of ``path`` from its topic.

    >>> from middleware.kg.backends.local import LocalStore
    >>> from middleware.planning.relpaths import from_key
    >>> v = Verbalizer(LocalStore(profile="metaqa"))
    >>> path_questions(from_key("<https://kgmw.dev/metaqa/relation/directed_by>"), v)
    ['what directed NE', 'NE directed by what', 'what is NE directed by', 'directed NE']
    """
    back = phrase(path, verbalizer, topic="").strip()
    out = " ".join(verbalizer.relation(p, forward=forward) for p, forward in path)
    return short_questions(out, back)


class PathReading:
    """Scores of relation paths against masked questions over one graph (safe to share
    between threads); each path's questions are encoded once."""

    def __init__(self, encoder: Encoder, verbalizer: Verbalizer) -> None:
        self.encoder = encoder
        self.verbalizer = verbalizer
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def _rows(self, paths: Sequence[RelationPath]) -> np.ndarray:
        """The paths' questions' vectors, one (questions × dimensions) block a path."""
        keys = [path_key(p) for p in paths]
        with self._lock:
            missing = {k: p for k, p in zip(keys, paths, strict=True) if k not in self._vectors}
            if missing:
                if len(self._vectors) + len(missing) > KEPT_PATHS:
                    self._vectors.clear()
                    missing = dict(zip(keys, paths, strict=True))
                asked = [path_questions(p, self.verbalizer) for p in missing.values()]
                rows = normalize(self.encoder.encode([q for qs in asked for q in qs]))
                start = 0
                for key, questions in zip(missing, asked, strict=True):
                    self._vectors[key] = rows[start : start + len(questions)]
                    start += len(questions)
            return np.stack([self._vectors[k] for k in keys])

    def scores(
        self, paths: Sequence[RelationPath], question: np.ndarray, *, peers: bool
    ) -> list[float]:
        """Each path's score for the masked ``question`` (its vector): the mean
        similarity of its questions, its hop count's prior, and ``PEER_BONUS`` for a
        path out and back where the question asks for ``peers`` (against it where not)."""
        if not paths:
            return []
        query = normalize(question[None, :])[0]
        read = (self._rows(paths) @ query).mean(axis=1)
        found = []
        for path, similarity in zip(paths, read.tolist(), strict=True):
            score = similarity + QUESTION_PRIOR.get(len(path), 0.0)
            if goes_out_and_back(path):
                score += PEER_BONUS if peers else -PEER_BONUS
            found.append(score)
        return found

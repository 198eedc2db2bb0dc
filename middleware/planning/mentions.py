"""Which relations a question names, by its short word sequences.

A sentence encoder reads a whole question as a bag of meanings: "who starred in the
movies written by NE" reads close to any path whose phrase holds "directed", because
"movies" does. Read one to three words at a time, the question names ``starring``
("starred in") and ``written by`` ("written by") outright and ``directed by`` only
weakly. A plan that leaves out a relation the question names is then less likely:
``coverage`` says how much. A relation is read either way and by its noun where the
profile gives one ("screenwriter" names ``written by``).

A question that names a relation its topic lacks ("what film did NE write" of an actor
who wrote nothing) is answered, if at all, along a detour: ``names_lacking`` tells the
zero-shot planner so (``Planning.unheld``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np
from pyoxigraph import NamedNode

from middleware.kg.walks import RelationPath
from middleware.planning.masking import MASK
from middleware.planning.path_reading import PEER_WORDS, starts_out_and_back
from middleware.text.embeddings.encoders import Encoder, normalize
from middleware.text.spans import STOPWORDS
from middleware.text.verbalize import Verbalizer

NAMED = 0.8  # a relation is named when a word sequence reads this close to a reading
# a relation the topic lacks is asked for when named this closely (chosen on
# unanswerable-metaqa dev, seed 11, against MetaQA dev fold 0, seed 11, with a broader
# first rule: at 0.65 23 of 243 right answers named such a relation, at 0.7 one)
NAMED_LACKING = 0.7
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


def shared_words(masked: str, count: int = 2) -> str:
    """The ``count`` words after the question's words of sharing (and any article
    between), which name what is shared: "screenwriter as" in "which films share the
    same screenwriter as NE" ("" where it has none).

    >>> shared_words("the movies that share directors with NE were written by who")
    'directors with'
    """
    found = list(PEER_WORDS.finditer(masked))
    if not found:
        return ""
    end = found[0].end()
    for match in found[1:]:  # "also share the same": one run of sharing words
        if masked[end : match.start()].strip(" ").lower() not in ("", "the", "a", "an"):
            break
        end = match.end()
    words = WORD.findall(masked[end:])
    while words and words[0].lower() in ("the", "a", "an"):
        words.pop(0)
    return " ".join(words[:count])


class RelationMentions:
    """How closely a question names each relation (either reading), cached by text."""

    def __init__(self, encoder: Encoder, verbalizer: Verbalizer, cache: int = 50_000) -> None:
        self.encoder = encoder
        self.verbalizer = verbalizer
        self._vectors: dict[str, np.ndarray] = {}
        self._cache = cache
        self._lock = threading.Lock()
        self._inverses: dict[str, set[str]] | None = None  # read once from the profile

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
        """Each predicate's closest reading (either way, or its noun) to any word
        sequence of the question."""
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
            noun = self.verbalizer.relation_noun(predicate)
            if noun is not None:  # "screenwriter" names written by
                readings.append(noun)
            found[predicate] = float((chunks @ self._encode(readings).T).max())
        return found

    def names_lacking(
        self,
        masked: str,
        held: set[NamedNode],
        peers: set[NamedNode],
        path: RelationPath,
    ) -> bool:
        """Whether the ``masked`` question asks for a relation that the topic's peers
        hold (``peers``: those out and back over one relation, ``peer_paths.py``) and
        the topic has in neither direction (``held``, or a declared inverse of it):
        one it names (``NAMED_LACKING``) more closely than any the topic holds, while
        the ``path`` it is answered by leaves that relation out, or starts out and
        straight back over another where the words after the word of sharing name the
        one lacked (``shared_words``). "What film did NE write" of an actor who wrote
        nothing, answered with his films; "which films have the same screenwriter as
        NE" of a film with none, answered with the writers of the films that share its
        director. "Who starred in NE movies" of a director, answered with his films'
        actors, is no detour: the path reaches the relation asked after a step the
        question leaves unsaid; nor is "the films that share directors with NE were
        written by who". Relations only other kinds of entity hold ("language" of a
        film, asked of a country) are not the topic's to lack."""
        if not path:
            return False
        held = held | {NamedNode(i) for p in held for i in self._partners().get(p.value, ())}
        lacked = sorted(peers - held, key=lambda p: p.value)
        if not lacked:
            return False
        named = self.named(masked, [*lacked, *held])
        closest_held = max((named[p] for p in held), default=0.0)
        asked = [p for p in lacked if named[p] >= max(NAMED_LACKING, closest_held + 1e-6)]
        if not asked:
            return False
        if any(p not in {q for q, _ in path} for p in asked):
            return True
        shared = shared_words(masked)
        if not shared or not starts_out_and_back(path):
            return False
        first = path[0][0]
        named = self.named(shared, [*asked, first])
        return max(named[p] for p in asked) >= max(NAMED_LACKING, named[first] + 1e-6)

    def _partners(self) -> dict[str, set[str]]:
        """Each relation's declared inverses (``owl:inverseOf``), both ways."""
        if self._inverses is None:
            found: dict[str, set[str]] = {}
            for iri in self.verbalizer.relations.iris():
                other = self.verbalizer.relations.get(iri).inverse_of
                if other:
                    found.setdefault(iri, set()).add(other)
                    found.setdefault(other, set()).add(iri)
            self._inverses = found
        return self._inverses

    def coverage(self, path: RelationPath, named: dict[NamedNode, float]) -> float:
        """``MISSED`` to the power of the relations the question names (``NAMED``)
        that the path leaves out."""
        on_path = {p for p, _ in path}
        left_out = sum(1 for p, v in named.items() if v >= NAMED and p not in on_path)
        return float(MISSED**left_out)

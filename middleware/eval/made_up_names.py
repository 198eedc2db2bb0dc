"""Pronounceable made-up names that no graph label matches: film-like titles
("Zorblax Nine", "The Drevon of Kaltu") and person names ("Miro Talvesk").

Neither a name nor any run of two or more of its words is a label (folded). A name
without a real word shares no word with the labels ("the" and "of" aside); a name with
one (``real_word``) holds exactly one word taken from the graph: a one-word film title
for a film, a person's surname for a person, so that a linker's weak partial match
(one word of the question, a surname) has something to find.

>>> maker = NameMaker(labels=frozenset({"nine", "michael mann"}),
...                   words=frozenset({"nine", "michael", "mann"}),
...                   film_words=["Nine"], surnames=["Mann"])
>>> name = maker.make(random.Random(3), "film", real=True)
>>> name.real_word, "Nine" in name.text.split(), is_made_up(name.text, "", maker.labels, maker.words)
('Nine', True, False)
>>> is_made_up("Zorblax Mann", "Mann", maker.labels, maker.words)
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from middleware.errors import LoadError
from middleware.eval.metaqa_kb import MetaQAKB
from middleware.text.folding import fold

STYLES = ("film", "person")
LINKING_WORDS = frozenset({"the", "of"})
PLAIN = {"film": ("{x}", "The {x}", "{x} {y}", "The {x} of {y}"), "person": ("{x} {y}",)}
WITH_REAL = {"film": ("{x} {r}", "The {r} of {x}", "{r} {x}"), "person": ("{x} {r}",)}
ATTEMPTS = 1000  # names tried before giving up; on MetaQA most first tries pass

_ONSETS = (
    *("b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "r", "s"),
    *("st", "t", "tr", "v", "z"),
)
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "u", "ai", "ou")
_CODAS = ("", "", "", "n", "r", "l", "s", "m")  # inside a word
_LAST_CODAS = (*_CODAS, "x", "nd", "rk", "th")  # at its end


def made_up_word(rng: random.Random, syllables: int) -> str:
    """Consonant-vowel syllables, a single consonant after a closed one, clusters only
    at the end, capitalized.

    >>> made_up_word(random.Random(1), 2).isalpha()
    True
    """
    parts: list[str] = []
    coda = ""
    for index in range(syllables):
        onsets = [o for o in _ONSETS if len(o) == 1] if coda else list(_ONSETS)
        coda = rng.choice(_LAST_CODAS if index == syllables - 1 else _CODAS)
        parts += [rng.choice(onsets), rng.choice(_VOWELS), coda]
    return "".join(parts).capitalize()


def is_made_up(text: str, real_word: str, labels: frozenset[str], words: frozenset[str]) -> bool:
    """Whether ``text`` is no label, holds no label as a run of 2+ words, and shares no
    word with the labels but ``real_word`` and the linking words."""
    folded = fold(text).split()
    if " ".join(folded) in labels:
        return False
    for start in range(len(folded)):
        for end in range(start + 2, len(folded) + 1):
            if " ".join(folded[start:end]) in labels:
                return False
    allowed = LINKING_WORDS | {fold(real_word)}
    return not any(w in words for w in folded if w not in allowed)


@dataclass(frozen=True)
class MadeUpName:
    """A made-up name, its style (film or person) and its real word ("" when none)."""

    text: str
    style: str
    real_word: str


class NameMaker:
    """Makes names absent from one graph's labels, each once."""

    def __init__(
        self,
        *,
        labels: frozenset[str],
        words: frozenset[str],
        film_words: Sequence[str],
        surnames: Sequence[str],
    ) -> None:
        self.labels = labels
        self.words = words
        self.real_words = {"film": list(film_words), "person": list(surnames)}
        self.used: set[str] = set()

    @classmethod
    def for_kb(cls, kb: MetaQAKB) -> NameMaker:
        """Real words from the KB: one-word film titles, people's surnames (plain, capitalized)."""
        films = [n for n in kb.of_type("movie") if n.isalpha() and n.istitle() and 3 <= len(n) <= 8]
        surnames = {
            last
            for n in kb.of_type("person")
            if len(n.split()) >= 2 and (last := n.split()[-1]).isalpha() and last.istitle()
        }
        return cls(
            labels=kb.labels,
            words=kb.words,
            film_words=films,
            surnames=sorted(s for s in surnames if 4 <= len(s) <= 10),
        )

    def make(self, rng: random.Random, style: str, *, real: bool) -> MadeUpName:
        """A new name of ``style``; with ``real``, one holding a real word when there are any."""
        pool = self.real_words[style] if real else []
        for _ in range(ATTEMPTS):
            real_word = rng.choice(pool) if pool else ""
            pattern = rng.choice(WITH_REAL[style] if real_word else PLAIN[style])
            x = made_up_word(rng, rng.choice((2, 2, 3)) if style == "film" else 2)
            y = made_up_word(rng, 2)
            text = pattern.format(x=x, y=y, r=real_word)
            key = fold(text)
            if key not in self.used and is_made_up(text, real_word, self.labels, self.words):
                self.used.add(key)
                return MadeUpName(text, style, real_word)
        raise LoadError("made-up names", None, f"no new {style} name in {ATTEMPTS} tries")

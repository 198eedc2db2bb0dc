"""Looser ways a question may write a label: short forms, initials, demonyms.

People write "uk" for "United Kingdom", "shakespeare" for "William Shakespeare",
"english" for "English Language", "jrr tolkien" for "J. R. R. Tolkien" and "jamaican"
for "Jamaica". :class:`NameVariants` derives such keys (folded, like every lookup key)
from all the labels of a graph at once, because whether a word may stand for a label
depends on the others: "language" ends hundreds of labels, so it is a category word
that may be dropped ("English Language" → "english") but never a surname, while
"shakespeare" ends two, so it may stand for the more connected of them.

The rules, each from the label's own text:

- a part in brackets and the part before it: "North Atlantic Treaty Organization (NATO)"
- the name before an appended region code: "Pablo Picasso-GB"
- the part before a comma: "Martin Luther King, Jr."; both sides of a colon:
  "Robin Hood: Prince of Thieves"
- a title-case label without a trailing category word: "Yale University", "Fulham F.C."
- the words before "of" (at least two): "United States of America" → "united states"
- in a name written in title case: a rare last word, or the last two words: "Adolf
  Hitler" → "hitler", "L. Frank Baum" → "frank baum"; a rare first word of a two-word
  name: "Jesus Christ"
- initials run together or left out: "C. S. Lewis" → "cs lewis", "James K. Polk" →
  "james polk"
- an acronym of the significant words, numerals kept whole: "United Kingdom" → "uk",
  "World War II" → "wwii", "United States of America" → "usa" and "us"
- a demonym or adjective of a one-word name (matched at lookup by stripping an English
  suffix): "jamaican", "brazilians", "japanese", "turkish" → "Jamaica", "Brazil", ...;
  of a name of two or three words, its last word's: "south australian", "north koreans"

These are guesses, so they rank below exact and folded matches (``TIERS['variant']``),
and several entities may share a variant: the linker ranks them by degree.

>>> table = NameVariants(["William Shakespeare", "United Kingdom", "English Language",
...                       "German Language", "French Language", "Jamaica", "C. S. Lewis"],
...                      head_min=3)
>>> [table.labels(k) for k in ("shakespeare", "uk", "english", "cs lewis", "jamaican")]
[['William Shakespeare'], ['United Kingdom'], ['English Language'], ['C. S. Lewis'], ['Jamaica']]
>>> table.labels("language")  # a category word stands for no label
[]
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from middleware.text.folding import fold
from middleware.text.spans import UNNAMING

# A last word that ends at least this many labels is a category word ("language",
# "university", "fc"): dropped from labels, never a surname.
HEAD_MIN = 20
# A last (or first) word that ends (starts) at most this many labels may stand alone.
RARE_MAX = 3
MIN_WORD = 4  # a one-word variant has at least this many letters
ACRONYM_STOP = frozenset({"of", "the", "and", "de", "for", "a", "an", "in", "on", "at", "to"})
_NUMERAL = re.compile(r"^(\d+|[ivx]+)$")
_QUALIFIER = re.compile(r"^(?P<name>.*[a-z.])-[A-Z]{2,3}$")
ListsByKey = Mapping[str, Sequence[str]]  # a key's labels, in the order derived
_BRACKETS = re.compile(r"^(?P<outer>[^()]+?)\s*\((?P<inner>[^()]+)\)\s*$")
# Demonym and adjective endings, longest first: "brazil|ians", "japan|ese", "turk|ish".
PLURAL = ("s", "")  # endings that make no demonym of a whole one-word label
SUFFIXES = ("ians", "ian", "eans", "ean", "ans", "an", "ese", "ish", "ns", "n", "ic", "i", "s", "")


def _words(text: str) -> list[str]:
    return fold(text).split()


def stems(word: str) -> set[str]:
    """What a one-word name may lose before a demonym ending: "Ukraine" → ukrain,
    "Italy" → ital, "Serbia" → serb, "Turkey" → turk."""
    found = {word}
    if word[-1:] in set("aeiouy"):
        found.add(word[:-1])
    if word[-2:] in ("ia", "ey", "ie", "ea"):
        found.add(word[:-2])
    return {s for s in found if len(s) >= MIN_WORD}


def mention_stems(word: str) -> set[tuple[str, str]]:
    """The stems a one-word mention may be built on, with the ending it leaves:
    "brazilians" → (brazil, ians), ..."""
    found = set()
    for suffix in SUFFIXES:
        if suffix and not word.endswith(suffix):
            continue
        stem = word[: len(word) - len(suffix)]
        if len(stem) >= MIN_WORD:
            found.add((stem, suffix))
    return found


def acronyms(words: list[str]) -> list[str]:
    """Initials of the significant words (numerals whole), of all of them and of those
    before "of": "united states of america" → usa, us."""
    parts = [words]
    if "of" in words[1:]:
        parts.append(words[: words.index("of")])
    found = []
    for part in parts:
        significant = [w for w in part if w not in ACRONYM_STOP]
        if len(significant) < 2:
            continue
        letters = "".join(w if _NUMERAL.match(w) and len(w) > 1 else w[0] for w in significant)
        if 2 <= len(letters) <= 5:
            found.append(letters)
    return found


class VariantLookup:
    """The labels each variant key may stand for: ``keys`` maps a key to labels, and
    ``stems`` a name's stem (before a demonym ending) to labels; in memory or on disk."""

    def __init__(self, keys: ListsByKey, stems: ListsByKey) -> None:
        self._keys, self._stems = keys, stems

    def labels(self, key: str) -> list[str]:
        """Labels that the folded ``key`` may stand for (none for a function word)."""
        if key in UNNAMING:
            return []
        found = list(self._keys.get(key, ()))
        *before, last = key.split(" ")
        if last.isalpha() and all(w.isalpha() for w in before):
            for stem, suffix in mention_stems(last):
                for text in self._stems.get(" ".join([*before, stem]), ()):
                    # a plural is not a demonym: "films" is not "film", "serbs" is
                    # "serbia"; a place of several words takes a demonym's ending only
                    if suffix in PLURAL and (before or fold(text) == stem):
                        continue
                    found.append(text)
        return list(dict.fromkeys(t for t in found if fold(t) != key))


class NameVariants(VariantLookup):
    """Variant keys of a set of labels, and the labels each key may stand for."""

    def __init__(self, labels: Iterable[str], *, head_min: int = HEAD_MIN) -> None:
        texts = list(dict.fromkeys(labels))
        split = {text: _words(text) for text in texts}
        self.last = Counter(w[-1] for w in split.values() if len(w) >= 2)
        self.first = Counter(w[0] for w in split.values() if len(w) >= 2)
        self.heads = frozenset(word for word, n in self.last.items() if n >= head_min)
        keys: dict[str, list[str]] = defaultdict(list)
        stems_of: dict[str, list[str]] = defaultdict(list)
        for text in texts:
            words = split[text]
            if len(words) == 1 and words[0].isalpha():
                for stem in stems(words[0]):
                    stems_of[stem].append(text)
            elif _place_like(text, words):  # "South Australia" → south australian
                for stem in stems(words[-1]):
                    stems_of[" ".join([*words[:-1], stem])].append(text)
            for key in self.variants(text, words):
                if key != " ".join(words):
                    keys[key].append(text)
        super().__init__(keys, stems_of)
        self.keys, self.stems = keys, stems_of  # for a copy kept on disk

    def variants(self, text: str, words: list[str] | None = None) -> set[str]:
        """The variant keys of one label (its own folded form excluded by the caller)."""
        words = _words(text) if words is None else words
        found: set[str] = set()
        bracket = _BRACKETS.match(text)
        if bracket:
            inner = _words(bracket["inner"])
            if not all(w.isdigit() for w in inner):
                found.add(" ".join(inner))
            found |= self.variants(bracket["outer"]) | {" ".join(_words(bracket["outer"]))}
        qualified = _QUALIFIER.match(text)
        if qualified:  # "Pablo Picasso-GB": a region or language code appended
            found |= self.variants(qualified["name"]) | {" ".join(_words(qualified["name"]))}
        if "," in text:
            found.add(" ".join(_words(text.split(",")[0])))
        if ":" in text:
            before, _, after = text.partition(":")
            found |= {" ".join(_words(before)), " ".join(_words(after))}
        if len(words) >= 2:
            found |= self._word_variants(words, name_like=_title_case(text))
        return {k for k in found if len(k.replace(" ", "")) >= 2}

    def _word_variants(self, words: list[str], *, name_like: bool) -> set[str]:
        found: set[str] = set()
        if name_like and words[-1] in self.heads and _whole(words[:-1]):
            found.add(" ".join(words[:-1]))
        if "of" in words[2:] and _whole(words[: words.index("of")]):
            found.add(" ".join(words[: words.index("of")]))  # "united states" (of America)
        last, first = words[-1], words[0]
        if name_like and last.isalpha() and len(last) >= MIN_WORD and last not in self.heads:
            if self.last[last] <= RARE_MAX:
                found.add(last)
            if len(words) >= 3 and len(words[-2]) > 1 and words[-2] not in ACRONYM_STOP:
                found.add(" ".join(words[-2:]))
        given = name_like and len(words) == 2 and first.isalpha() and len(first) >= MIN_WORD
        if given and self.first[first] <= RARE_MAX - 1:
            found.add(first)
        if any(len(w) == 1 for w in words[:-1]):
            found.add(" ".join(w for w in words if len(w) > 1 or w == words[-1]))
            found.add(" ".join(_run_initials(words)))
        found.update(acronyms(words))
        return found


def _place_like(text: str, words: list[str]) -> bool:
    """A name of a few whole words in title case, whose last word may take a demonym
    ending ("South Australia", "North Korea")."""
    return (
        2 <= len(words) <= 3
        and words[0] not in UNNAMING  # "In America" is a film's title
        and all(w.isalpha() for w in words)
        and _title_case(text)
    )


def _whole(words: list[str]) -> bool:
    """Whether ``words`` can be a name: not ending in a linking word ("Year of the")."""
    return bool(words) and words[-1] not in ACRONYM_STOP and words[-1].isalnum()


def _title_case(text: str) -> bool:
    """Every word but a short linking one starts upper case, as a person's or a
    place's name does ("Adolf Hitler"); "Capital punishment" or "War film" do not."""
    words = [w for w in re.split(r"[\s-]+", text) if w]
    return all(w[:1].isupper() or w[:1].isdigit() for w in words if w.lower() not in ACRONYM_STOP)


def _run_initials(words: list[str]) -> list[str]:
    """Runs of one-letter words written together: "j r r tolkien" → jrr tolkien."""
    out: list[str] = []
    run = False  # whether out[-1] is a run of one-letter words
    for word in words:
        if len(word) == 1 and run:
            out[-1] += word
        else:
            out.append(word)
            run = len(word) == 1
    return out

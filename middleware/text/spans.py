"""Which spans of a question may name an entity, and which of them to keep.

A span is one to ``max_words`` words; it is a candidate when it is several words
(not all stopwords), capitalised, or written in brackets, so common words that happen
to be titles ("up", "her") are left alone. A question written all in lower case has no
capitals to go by, so there any single word that is not a stopword is a candidate. Of the spans that link, the longest win and
overlaps are dropped; the result is in reading order.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from middleware.text.folding import fold

T = TypeVar("T")
_WORD = re.compile(r"[\w'’.-]+")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "how",
        "did",
        "does",
        "do",
        "that",
        "this",
        "these",
        "those",
    ]
)
# In an all-lower-case question a single word is a candidate unless it is one of these:
# function words, and question words like "kind" or "called" that title too much.
_UNNAMING_WORDS = """why done doing has have had having been being am i me my we our you
your he him his she her it its they them their can could will would shall should may
might must not no as if so than then there here from into out about over under after
before while also all any some much many more most other such only own same just very
too get got go goes went one ones kind type name called"""
UNNAMING = STOPWORDS | frozenset(_UNNAMING_WORDS.split())


@dataclass(frozen=True)
class Span:
    text: str
    start: int  # character offset in the question
    first: int  # index of its first word
    size: int  # words


def candidate_spans(text: str, *, max_words: int = 6) -> list[Span]:
    """Candidate spans, longest first, then left to right.

    >>> [s.text for s in candidate_spans("Who grew up watching the Matrix", max_words=2)][:3]
    ['Who grew', 'grew up', 'up watching']
    >>> [s.text for s in candidate_spans("what is the flag of arizona?", max_words=1)]
    ['flag', 'arizona']
    """
    words = list(_WORD.finditer(text))
    lower_case = not any(c.isupper() for c in text)
    found = []
    for size in range(min(max_words, len(words)), 0, -1):
        for first in range(len(words) - size + 1):
            start, end = words[first].start(), words[first + size - 1].end()
            span = text[start:end]
            bracketed = text[max(0, start - 1) : start] == "[" and text[end : end + 1] == "]"
            single_ok = bracketed or span[:1].isupper() or (lower_case and span not in UNNAMING)
            if not (size > 1 or single_ok) or len(fold(span)) < 2:
                continue
            if size > 1 and all(
                w.group(0).lower() in STOPWORDS for w in words[first : first + size]
            ):
                continue
            found.append(Span(span, start, first, size))
    return found


def select_spans(candidates: list[Span], pick: Callable[[Span], T | None]) -> list[tuple[Span, T]]:
    """Greedy choice in candidate order: a span is kept when ``pick`` finds something
    for it and none of its words is taken yet; reading order."""
    taken: set[int] = set()
    found: list[tuple[Span, T]] = []
    for span in candidates:
        words = set(range(span.first, span.first + span.size))
        if words & taken:
            continue
        chosen = pick(span)
        if chosen is not None:
            taken |= words
            found.append((span, chosen))
    return sorted(found, key=lambda item: item[0].start)

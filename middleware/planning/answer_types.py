"""Answer kinds: what a question asks for, and what a plan's ends are.

Graphs such as MetaQA's or FB15k-237 declare no classes, so kinds come from what can
be read off any graph: an end that is a date literal, or whose label is a year
(1500-2099) or a date, is a ``date``; a number typed otherwise (``xsd:integer``, a
currency) or a label that is another number is a ``number``; anything else an
``entity``. The question says which it wants by its
English question words ("when", "what year", "how many", "who"), a rule of the
language, the same for every graph; where it holds several, the first one counts
("who starred in Heat when it came out" asks for people). A plan whose ends are of
another kind than the question asks for comes after those that match.

>>> asked_kind("When was Heat released?"), asked_kind("what was the release year of NE")
('date', 'date')
>>> asked_kind("which films were released in the same year as NE"), asked_kind("who directed NE")
(None, 'entity')
>>> asked_kind("Who starred in NE when it was released?"), asked_kind("what movies share the year of NE")
('entity', None)
>>> ends_kind(["1995", "1996"]), ends_kind(["7.5", "1200"]), ends_kind(["Michael Mann", "1995"])
('date', 'number', 'entity')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal as KindName

from pyoxigraph import Literal

Kind = KindName["date", "number", "entity"]

XSD = "http://www.w3.org/2001/XMLSchema#"
DATE_TYPES = frozenset(XSD + t for t in ("date", "dateTime", "gYear", "gYearMonth"))
TEXT_TYPES = frozenset((XSD + "string", "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"))
# "what year", "which year", "what was the release year", "what is its date"
DATE_ASKED = re.compile(
    r"\bwhen\b|\b(?:what|which|whose)\s+(?:(?:is|was|are|were)\s+)?"
    r"(?:(?:the|its|their|his|her)\s+)?(?:\w+\s+)?(?:year|date|decade|century)s?(?![\w-])",
    re.IGNORECASE,
)
NUMBER_ASKED = re.compile(r"\bhow\s+(?:many|much|long|old|tall|high)\b", re.IGNORECASE)
ENTITY_ASKED = re.compile(r"\bwho(?:m|se)?\b|\bwhere\b", re.IGNORECASE)
YEAR_OR_DATE = re.compile(
    r"^(?:1[5-9]|20)\d\d$|^\d{4}-\d{2}(?:-\d{2})?(?:T[\d:.]+(?:Z|[+-]\d\d:?\d\d)?)?$"
    r"|^\d{1,2}/\d{1,2}/\d{2,4}$"
)
NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)*$")


def asked_kind(question: str) -> Kind | None:
    """The kind the question's first question word asks for; None when none says."""
    cues: tuple[tuple[re.Pattern[str], Kind], ...] = (
        (NUMBER_ASKED, "number"),
        (DATE_ASKED, "date"),
        (ENTITY_ASKED, "entity"),
    )
    found = [(m.start(), kind) for pattern, kind in cues if (m := pattern.search(question))]
    return min(found)[1] if found else None


def term_kind(term: object, label: str) -> Kind:
    """One end's kind: by a literal's datatype where it has one, else by its text."""
    text = label.strip()
    if isinstance(term, Literal) and term.datatype is not None:
        if term.datatype.value in DATE_TYPES:
            return "date"
        if term.datatype.value not in TEXT_TYPES and NUMBER.match(text):
            return "number"  # any typed number (xsd:unsignedInt, a currency) is no year
    if YEAR_OR_DATE.match(text):
        return "date"
    if NUMBER.match(text):
        return "number"
    return "entity"


def ends_kind(labels: Sequence[str], terms: Iterable[object] | None = None) -> Kind:
    """The kind more than half of a plan's ends are (else entity); ``terms``, where
    given, are the ends themselves (a literal's datatype decides)."""
    ends = list(terms) if terms is not None else [None] * len(labels)
    kinds = [term_kind(t, text) for t, text in zip(ends, labels, strict=True) if text.strip()]
    for kind in ("date", "number"):
        if kinds and kinds.count(kind) * 2 > len(kinds):
            return kind
    return "entity"

"""Answer kinds: what a question asks for, and what a plan's ends are.

Graphs such as MetaQA's or FB15k-237 declare no classes, so kinds come from what can
be read off any graph: an end whose label is a year or a date is a ``date``, one that
is a number is a ``number``, anything else an ``entity``. The question says which it
wants by its English question word ("when", "what year", "how many", "who"), a rule
of the language, the same for every graph. A plan whose ends are of another kind
than the question asks for comes after those that match.

>>> asked_kind("When was Heat released?"), asked_kind("what was the release year of NE")
('date', 'date')
>>> asked_kind("which films were released in the same year as NE"), asked_kind("who directed NE")
(None, 'entity')
>>> ends_kind(["1995", "1996"]), ends_kind(["7.5"]), ends_kind(["Michael Mann", "1995"])
('date', 'number', 'entity')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

Kind = Literal["date", "number", "entity"]

WH = r"(?:what|which|whose)"
DATE_ASKED = re.compile(
    rf"\bwhen\b|\b{WH}\s+(?:\w+\s+){{0,3}}?(?:year|date|decade|century)s?\b"
    rf"|\b(?:year|date)s?\s+(?:\w+\s+)?(?:was|were|did|is|are)\b",
    re.IGNORECASE,
)
NUMBER_ASKED = re.compile(r"\bhow\s+(?:many|much|long|old|tall|high)\b", re.IGNORECASE)
ENTITY_ASKED = re.compile(r"\bwho(?:m|se)?\b|\bwhere\b", re.IGNORECASE)
DATED = re.compile(r"^\d{3,4}$|^\d{4}-\d{2}(?:-\d{2})?(?:T[\d:]+Z?)?$|^\d{1,2}/\d{1,2}/\d{2,4}$")
NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)*$")


def asked_kind(question: str) -> Kind | None:
    """The kind the question's words ask for; None when they do not say."""
    if NUMBER_ASKED.search(question):
        return "number"
    if DATE_ASKED.search(question):
        return "date"
    if ENTITY_ASKED.search(question):
        return "entity"
    return None


def ends_kind(labels: Sequence[str]) -> Kind:
    """The kind most of a plan's end labels are (ties: entity)."""
    texts = [t.strip() for t in labels if t.strip()]
    dates = sum(bool(DATED.match(t)) for t in texts)
    numbers = sum(bool(NUMBER.match(t)) and not DATED.match(t) for t in texts)
    if texts and dates * 2 > len(texts):
        return "date"
    if texts and numbers * 2 > len(texts):
        return "number"
    return "entity"

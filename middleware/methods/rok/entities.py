"""RoK's key entities: the model's list of mentions, read leniently, and linked.

Mentions the question itself writes come first, then entity labels found verbatim in
the question (question spans, every backend), then mentions from the reasoning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyoxigraph import NamedNode

from middleware.kg.base import Entity
from middleware.text.folding import fold
from middleware.text.linking import EntityLinker

MAX_MENTIONS = 30
_NUMBER = re.compile(r"\d+")
_ENTITY_SPLIT = re.compile(r"[;\n]|,(?![^()]*\))")


@dataclass(frozen=True)
class KeyEntity:
    """A linked key entity and where its mention came from."""

    entity: Entity
    mention: str
    origin: str  # "question", "question-span" or "reasoning"

    def to_dict(self) -> dict[str, Any]:
        return {
            "mention": self.mention,
            "origin": self.origin,
            "iri": self.entity.iri.value,
            "label": self.entity.label,
            "match": self.entity.match,
            "score": self.entity.score,
        }


def parse_entity_list(text: str) -> list[str]:
    """Mentions from the model's list: split on semicolons or commas, cleaned, unique.

    >>> parse_entity_list("Titanic; [James Cameron], 1997 ; titanic;  ")
    ['Titanic', 'James Cameron', '1997']
    """
    mentions: dict[str, str] = {}
    for piece in _ENTITY_SPLIT.split(text):
        mention = piece.strip().strip("[]\"'*•-.").strip()
        if mention and len(mention) <= 200 and fold(mention) and fold(mention) not in mentions:
            mentions[fold(mention)] = mention
    return list(mentions.values())[:MAX_MENTIONS]


def parse_numbers(text: str, count: int) -> list[int] | None:
    """1-based fact numbers in the model's reply, as 0-based indices; None if unreadable.

    >>> parse_numbers("2, 5 and 9", 6), parse_numbers("None.", 6), parse_numbers("maybe", 6)
    ([1, 4], [], None)
    """
    numbers = [int(n) for n in _NUMBER.findall(text)]
    if not numbers:
        return [] if re.search(r"\bnone\b", text, re.IGNORECASE) else None
    return list(dict.fromkeys(n - 1 for n in numbers if 1 <= n <= count))


def _mentioned_in(question: str, mention: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(fold(mention))}(?!\w)", fold(question)) is not None


def order_key_entities(
    question: str,
    mentions: Sequence[str],
    linker: EntityLinker,
    *,
    limit: int,
) -> tuple[list[KeyEntity], list[str]]:
    """Linked key entities, question mentions first; and the mentions that did not link."""
    from_question = [m for m in mentions if _mentioned_in(question, m)]
    from_reasoning = [m for m in mentions if not _mentioned_in(question, m)]
    ordered: list[tuple[str, str, Entity | None]] = [(m, "question", None) for m in from_question]
    ordered += [(span, "question-span", e) for span, e in linker.spans(question)]
    ordered += [(m, "reasoning", None) for m in from_reasoning]
    linked: dict[NamedNode, KeyEntity] = {}
    unlinked: list[str] = []
    for mention, origin, entity in ordered:
        if len(linked) >= limit:
            break
        best = entity or linker.best(mention)
        if best is None:
            unlinked.append(mention)
        elif best.iri not in linked:
            linked[best.iri] = KeyEntity(best, mention, origin)
    return list(linked.values()), unlinked

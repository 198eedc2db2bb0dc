"""A follow-up question made standalone with the entities of earlier turns.

"and who directed it?" after an answer "Titanic" becomes "and who directed Titanic?",
so every method links it as if it had been asked that way. A question is resolved
when it uses a pronoun (it, he, she, they, ...) or names no entity of its own; the
entities carried are the last turn's answer's (linked in its text), else that turn's
question's (itself resolved first), going back a few turns until some are found.
Pronouns are replaced by the names (possessives get ``'s``); a question without a
pronoun gets ``(about NAMES)`` appended. The turns are what the client sends, so a
conversation needs nothing kept on the server.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from middleware.kg.base import Entity
from middleware.text.linking import EntityLinker

MAX_TURNS = 3  # earlier turns looked at, most recent first
MAX_CARRIED = 3  # entities carried into one question
MAX_TEXT_CHARS = 2000  # of an earlier question or answer looked at for entities
_PLAIN = ("it", "he", "she", "they", "him", "her", "them")
_POSSESSIVE = ("its", "his", "their", "hers", "theirs")
_PRONOUN = re.compile(r"\b(" + "|".join(_PLAIN + _POSSESSIVE) + r")\b", re.IGNORECASE)
# what the service appends to an answer's text (server/chat_text.py), and its old form
_TAIL = re.compile(r"\n\s*(Sources:|Evidence:|\(full answer: |\(not grounded in a graph\))")


@dataclass(frozen=True)
class Turn:
    """One earlier exchange: the user's question and the assistant's reply (if any)."""

    question: str
    answer: str | None = None


@dataclass(frozen=True)
class FollowUp:
    """The question as asked, as it will be answered, and the entities carried into it."""

    asked: str
    question: str
    carried: list[Entity] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.question != self.asked


def answer_part(reply: str) -> str:
    """An assistant reply without the Sources section and notes the service appended.

    >>> answer_part("Titanic\\n\\nSources:\\n[1] Titanic —directed by→ James Cameron")
    'Titanic'
    """
    return _TAIL.split(reply, maxsplit=1)[0].strip()


def resolve_follow_up(question: str, earlier: Sequence[Turn], linker: EntityLinker) -> FollowUp:
    """``question`` made standalone with the entities of ``earlier`` (oldest first)."""
    has_pronoun = _PRONOUN.search(question) is not None
    if not earlier or (not has_pronoun and linker.spans(question)):
        return FollowUp(question, question)
    carried = _carried(earlier, linker)
    if not carried:
        return FollowUp(question, question)
    names = _names([entity.label or entity.iri.value for entity in carried])
    if has_pronoun:

        def name_for(match: re.Match[str]) -> str:
            possessive = match.group(1).lower() in _POSSESSIVE
            return names + "'s" if possessive else names

        resolved = _PRONOUN.sub(name_for, question)
    else:
        resolved = f"{question} (about {names})"
    return FollowUp(question, resolved, carried)


def _carried(earlier: Sequence[Turn], linker: EntityLinker) -> list[Entity]:
    """The entities of the most recent turn that names some: its answer's, else its
    question's (resolved against the turns before it)."""
    start = max(0, len(earlier) - MAX_TURNS)
    for index in range(len(earlier) - 1, start - 1, -1):
        turn = earlier[index]
        reply = answer_part(turn.answer or "")[:MAX_TEXT_CHARS]
        found = [e for _, e in linker.spans(reply)] if reply else []
        if not found:
            asked = turn.question[:MAX_TEXT_CHARS]
            if asked.strip():
                asked = resolve_follow_up(asked, earlier[start:index], linker).question
                found = [e for _, e in linker.spans(asked)]
        unique = list({entity.iri.value: entity for entity in found}.values())
        if unique:
            return unique[:MAX_CARRIED]
    return []


def _names(labels: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]

"""A follow-up question made standalone with the entities of earlier turns.

"and who directed it?" after an answer "Titanic" becomes "and who directed Titanic?",
so every method links it as if it had been asked that way. A question is resolved
when it uses a pronoun (it, he, she, they, ...) or names no entity of its own; the
entities carried are the last turn's answer's (linked in its text) and that turn's
question's topics (the question itself resolved first), going back a few turns until
some are found. Pronouns are replaced by the answer's entities (the question's when
the answer named none; possessives get ``'s``); a question without a pronoun gets all
of them appended as ``(context: A; B)``. A leading "and", "so", "but" ... is dropped. The turns are what the client sends, so a
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
# a word that ties a follow-up to what came before, out of place in a standalone question
_LEADING = re.compile(r"^\s*(and|but|so|then|also|ok|okay|well)\b[\s,]*", re.IGNORECASE)
# what the service appends to an answer's text (server/answering/chat_text.py), and its old form
_TAIL = re.compile(r"\n\s*(Sources:|Evidence:|\(full answer: |\(not grounded in a graph\))")
# the service's reply when the graph does not hold the answer (``methods.answer.NOT_HELD``):
# it names no answer, and the guess that may follow is not one to carry
_NOT_HELD = "The graph does not hold the answer."


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
    >>> answer_part("The graph does not hold the answer.\\nBest guess (...): Heat, confidence 0.2")
    ''
    """
    if reply.lstrip().startswith(_NOT_HELD):
        return ""
    return _TAIL.split(reply, maxsplit=1)[0].strip()


class _Mentions:
    """The entities a text names, looked up once per text (a resolution asks about the
    same turns again while it resolves earlier questions)."""

    def __init__(self, linker: EntityLinker) -> None:
        self.linker = linker
        self._found: dict[str, list[Entity]] = {}

    def __call__(self, text: str) -> list[Entity]:
        if text not in self._found:
            self._found[text] = [entity for _, entity in self.linker.spans(text)] if text else []
        return self._found[text]


def resolve_follow_up(question: str, earlier: Sequence[Turn], linker: EntityLinker) -> FollowUp:
    """``question`` made standalone with the entities of ``earlier`` (oldest first)."""
    return _resolve(question, earlier, _Mentions(linker))


def _resolve(question: str, earlier: Sequence[Turn], mentions: _Mentions) -> FollowUp:
    has_pronoun = _PRONOUN.search(question) is not None
    if not earlier or (not has_pronoun and mentions(question)):
        return FollowUp(question, question)
    lead, rest = _carried(earlier, mentions)
    if not lead:
        return FollowUp(question, question)
    if has_pronoun:
        names = _names([_label(entity) for entity in lead])

        def name_for(match: re.Match[str]) -> str:
            possessive = match.group(1).lower() in _POSSESSIVE
            return names + "'s" if possessive else names

        resolved = _PRONOUN.sub(name_for, question)
        carried = lead
    else:
        carried = lead + rest
        resolved = f"{question} (context: {'; '.join(_label(entity) for entity in carried)})"
    stripped = _LEADING.sub("", resolved)
    resolved = stripped if stripped[:1].isalnum() else resolved
    return FollowUp(question, resolved[:1].upper() + resolved[1:], carried)


def _carried(earlier: Sequence[Turn], mentions: _Mentions) -> tuple[list[Entity], list[Entity]]:
    """The entities of the most recent turn that names some: its answer's (what a
    pronoun stands for; else its question's), and its question's topics besides, at
    most ``MAX_CARRIED`` in all. The question is first resolved against the turns
    before it."""
    start = max(0, len(earlier) - MAX_TURNS)
    for index in range(len(earlier) - 1, start - 1, -1):
        turn = earlier[index]
        reply = answer_part(turn.answer or "")[:MAX_TEXT_CHARS]
        answered = mentions(reply)
        asked = turn.question[:MAX_TEXT_CHARS]
        topics: list[Entity] = []
        if asked.strip():
            asked = _resolve(asked, earlier[start:index], mentions).question
            topics = mentions(asked)
        unique = list({e.iri.value: e for e in answered + topics}.values())[:MAX_CARRIED]
        if unique:
            cut = len({e.iri.value for e in answered})
            return (unique[:cut], unique[cut:]) if cut else (unique, [])
    return [], []


def _label(entity: Entity) -> str:
    return entity.label or entity.iri.value


def _names(labels: list[str]) -> str:
    """The labels as a phrase: A; A and B; A, B and C."""
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]

"""Words the learned questions keep: a span they often contain unmasked is part of how
questions ask ("state", "president", "live"), not a name the question is about.

The memory's questions have their topic masked, so what is left is the wording of the
question. When a question links two spans, "what state does NE belong to" shows that
"state" is the question's wording and "new york city" its topic.

>>> words = QuestionWords(["what state is NE in?", "what NE state is it?",
...                        "which state was NE born in?", "who did NE marry?"], mask="NE")
>>> words.share("state"), words.share("new york"), words.share("ne")
(0.75, 0.0, 0.0)
>>> words.common("state"), words.common("new york"), words.common("born")
(True, False, False)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from middleware.text.folding import fold

# A span is common when at least this share of the learned questions contains it, and
# at least COMMON_MIN of them (chosen on WebQuestions' development fold: "state",
# "president", "famous" and "up" are common; "star wars", asked about 4 times in 845
# questions, is not).
COMMON_SHARE = 0.005
COMMON_MIN = 3
MASKED = "<masked>"  # no folded word reads so


def words_of(text: str) -> tuple[str, ...]:
    """Folded words of ``text``.

    >>> words_of("What's  the Beatles' best album?")
    ('whats', 'the', 'beatles', 'best', 'album')
    """
    return tuple(fold(text).split())


class QuestionWords:
    """How many learned questions contain a span's words, in order, unmasked."""

    def __init__(self, questions: Iterable[str], *, mask: str | None = None) -> None:
        # the mask stands for the topic: no span's words, and it keeps its neighbours apart
        self._questions = [
            tuple(w for part in _split(q, mask) for w in (*words_of(part), MASKED))[:-1]
            for q in questions
        ]
        self._postings: dict[str, list[int]] = defaultdict(list)  # word -> questions
        for i, words in enumerate(self._questions):
            for word in set(words):
                self._postings[word].append(i)
        self._shares: dict[tuple[str, ...], float] = {}

    def share(self, span: str) -> float:
        """The share of learned questions that contain ``span`` as whole words."""
        words = words_of(span)
        if not words or not self._questions:
            return 0.0
        if words not in self._shares:
            rarest = min((self._postings.get(w, []) for w in words), key=len)
            found = len(rarest)  # a word's postings hold each question once
            if len(words) > 1:
                found = sum(_contains(self._questions[i], words) for i in rarest)
            self._shares[words] = found / len(self._questions)
        return self._shares[words]

    def common(self, span: str) -> bool:
        """Whether ``span`` is common enough in the learned questions to be wording."""
        share = self.share(span)
        return share >= COMMON_SHARE and share * len(self._questions) >= COMMON_MIN


def _split(question: str, mask: str | None) -> list[str]:
    return question.split(mask) if mask else [question]


def _contains(words: tuple[str, ...], part: tuple[str, ...]) -> bool:
    size = len(part)
    return any(words[i : i + size] == part for i in range(len(words) - size + 1))

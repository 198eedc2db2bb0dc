"""Reading the model's facts and answers in the pseudo-graph method."""

from __future__ import annotations

import re

from middleware.methods.steps import clean_answer
from middleware.text.folding import fold

_BRACES = re.compile(r"\{([^{}\n]+)\}")


def parse_fact_lines(text: str) -> list[tuple[str, str, str]]:
    """Facts written one per line as ``s | r | o`` (or ``<s> <r> <o>``).

    >>> parse_fact_lines("Heat | directed by | Michael Mann\\n<Heat> <year> <1995>\\nnoise")
    [('Heat', 'directed by', 'Michael Mann'), ('Heat', 'year', '1995')]
    """
    facts: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        line = line.strip().lstrip("-*• ").strip()
        parts = (
            [p.strip() for p in line.split("|")] if "|" in line else re.findall(r"<([^<>]+)>", line)
        )
        if len(parts) > 3:
            parts = [parts[0], " | ".join(parts[1:-1]), parts[-1]]
        if len(parts) == 3 and all(parts):
            facts.append((parts[0], parts[1], parts[2]))
    return facts


def answer_in_braces(text: str) -> str:
    """The braced answer, else the cleaned first line.

    >>> answer_in_braces("Based on the facts it is {Lake Superior}."), answer_in_braces("Paris.")
    ('Lake Superior', 'Paris')
    """
    found = _BRACES.search(text)
    return found.group(1).strip() if found else clean_answer(text)


def fact_key(subject: str, relation: str, obj: str) -> str:
    """One key for a fact however it is cased, accented or punctuated."""
    return "|".join(fold(part) for part in (subject, relation, obj))

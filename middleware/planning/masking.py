"""The question with its topic entity masked: what relation it asks for, not about whom.

Learning and asking mask the same way, so "films directed by [Joel Zwick]" and "films
directed by Sam Mendes" read alike and their relation paths can be shared.

>>> mask("What films did Joel Zwick direct?", "Joel Zwick")
'what films did NE direct?'
>>> mask("what did [Heat] win", "heat")
'what did NE win'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pyoxigraph import NamedNode

from middleware.text.linking import EntityLinker

MASK = "NE"
TOPIC_CANDIDATES = 5  # entities per span searched for the known topic


def mask(question: str, span: str) -> str:
    """``question`` lower-cased with every occurrence of ``span`` (and its brackets)
    replaced by ``NE``; unchanged but lower-cased when the span is not in it."""
    text = question.strip()
    if span.strip():
        name = re.escape(span.strip())
        pattern = r"\[\s*" + name + r"\s*\]|(?<!\w)" + name + r"(?!\w)"
        text = re.sub(pattern, MASK, text, flags=re.IGNORECASE)
    return MASK.join(part.lower() for part in text.split(MASK))


def mask_all(question: str, spans: Sequence[str]) -> str:
    """``question`` with each of ``spans`` masked: what it says besides its names.

    >>> mask_all("Who directed The Sun Also Rises with Tyrone Power?", ["The Sun Also Rises", "Tyrone Power"])
    'who directed NE with NE?'
    """
    for span in dict.fromkeys(spans):
        question = mask(question, span)
    return question


NAMED_KIND = re.compile(rf"\b(?:the|a|an)\s+\w+\s+{MASK}\b")


def without_kind(masked: str) -> str:
    """A masked question with the one word that names the topic's kind dropped ("the
    movie NE" reads "NE"): a wording from relation labels names no kind, and for the
    encoder a kind word outweighs the relation asked about ("release year of the movie
    NE" reads closer to "directed" than to "release year of NE").

    >>> without_kind("what was the release year of the movie NE")
    'what was the release year of NE'
    """
    return NAMED_KIND.sub(MASK, masked)


def topic_spans(
    linker: EntityLinker, question: str, *, per_span: int = 1
) -> list[tuple[str, NamedNode]]:
    """The question's linked spans with up to ``per_span`` entities each, in reading
    order, a span's best entity first."""
    return [
        (span, entity.iri)
        for span, entities in linker.span_entities(question, per_span=per_span)
        for entity in entities
    ]


def mask_topic(
    linker: EntityLinker, question: str, topic: NamedNode, names: tuple[str, ...] = ()
) -> str:
    """The question with the span that links to ``topic`` masked; failing that, the
    first of ``names`` (the dataset's own name for the topic) found in it."""
    named = linker.spans_naming(question, topic, per_span=TOPIC_CANDIDATES)
    if named:
        return mask(question, named[0])
    for name in names:
        if name and name.lower() in question.lower():
            return mask(question, name)
    return mask(question, "")

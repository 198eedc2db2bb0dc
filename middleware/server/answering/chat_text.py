"""The text of a chat completion: the answer, then a compact Sources section.

OpenAI clients keep only the message text (LangChain's ``ChatOpenAI`` drops the extra
``kgmw`` field), so with ``chat_sources`` on the text itself carries the evidence, one
short line per path or triple, and the id the full answer is kept under.

>>> from middleware.methods.answer import Answer
>>> print(sources_text(Answer("q", "Paris", "io"), [], answer_id=None, limit=5))
Paris
<BLANKLINE>
(not grounded in a graph)
"""

from __future__ import annotations

from collections.abc import Sequence

from middleware.kg.base import Hop, KnowledgeGraph
from middleware.kg.base import Path as GraphPath
from middleware.methods.answer import Answer
from middleware.text.verbalize import Verbalizer

SOURCES_HEADING = "Sources:"


def evidence_lines(
    answer: Answer, graphs: Sequence[KnowledgeGraph], *, literal_max_chars: int = 80
) -> list[str]:
    """Each evidence path and triple as ``A —relation→ B``, tagged with its source
    when the answer drew on several."""
    verbalizers = {
        graph.name: Verbalizer(graph, literal_max_chars=literal_max_chars) for graph in graphs
    }
    several = len(verbalizers) > 1

    def line(path: GraphPath, fallback: str, source: str | None) -> str:
        verbalizer = verbalizers.get(source or "") or next(iter(verbalizers.values()), None)
        text = verbalizer.path(path, style="arrows") if verbalizer is not None else fallback
        return text + (f" ({source})" if several and source else "")

    lines = [line(item.path, item.text, item.source) for item in answer.evidence.paths]
    lines += [
        line(GraphPath((Hop(fact.triple),)), fact.text, fact.triple.source)
        for fact in answer.evidence.triples
    ]
    return lines


def sources_text(
    answer: Answer,
    graphs: Sequence[KnowledgeGraph],
    *,
    answer_id: str | None,
    limit: int,
    literal_max_chars: int = 80,
) -> str:
    """The answer, then ``Sources:`` with up to ``limit`` numbered evidence lines and,
    when the answer is kept (``answer_id``), where to fetch all of it."""
    text = [answer.answer or "(no answer)"]
    lines = evidence_lines(answer, graphs, literal_max_chars=literal_max_chars)
    if lines:
        text += ["", SOURCES_HEADING]
        text += [f"[{n}] {line}" for n, line in enumerate(lines[:limit], start=1)]
        if len(lines) > limit:
            text.append(f"... and {len(lines) - limit} more")
    elif not answer.grounded:
        text += ["", "(not grounded in a graph)"]
    if answer_id is not None:
        text.append(f"(full answer: GET /v1/answers/{answer_id})")
    return "\n".join(text)

"""The text of a chat completion: the answer, then a compact Sources section.

OpenAI clients keep only the message text (LangChain's ``ChatOpenAI`` drops the extra
``kgmw`` field), so with ``chat_sources`` on the text itself carries the evidence, one
short line per path or triple (the chains that support the answer first), and the id
the full answer is kept under. When the graph does not hold the answer the text says
so; the withheld guess follows, labelled as unsupported, only when the request asks
for it.

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
from middleware.methods.answer import NOT_HELD, Answer
from middleware.methods.support import support_path
from middleware.text.verbalize import Verbalizer

SOURCES_HEADING = "Sources:"
NOT_GROUNDED = "(not grounded in a graph)"


def reply_text(answer: Answer, *, show_guess: bool = False) -> str:
    """The answer, or that the graph does not hold it (with ``show_guess``, and a guess
    withheld, the guess on a second line, labelled as unsupported)."""
    if answer.found:
        return answer.answer or "(no answer)"
    lines = [NOT_HELD]
    if show_guess and answer.guess is not None:
        guess = answer.guess
        lines.append(
            f"Best guess (not supported by the graph): {guess.answer}, "
            f"confidence {guess.confidence:g}"
        )
    return "\n".join(lines)


def evidence_lines(
    answer: Answer, graphs: Sequence[KnowledgeGraph], *, literal_max_chars: int = 80
) -> list[str]:
    """Each chain that supports the answer, then each evidence path and triple not
    wholly inside one, as ``A —relation→ B``, tagged with its source when the answer
    drew on several; a line is listed once."""
    verbalizers = {
        graph.name: Verbalizer(graph, literal_max_chars=literal_max_chars) for graph in graphs
    }
    several = len(verbalizers) > 1

    def line(path: GraphPath, fallback: str, source: str | None) -> str:
        verbalizer = verbalizers.get(source or "") or next(iter(verbalizers.values()), None)
        text = verbalizer.path(path, style="arrows") if verbalizer is not None else fallback
        return text + (f" ({source})" if several and source else "")

    supporting = [support_path(chain) for chain in answer.support]
    covered = {triple.key() for chain in answer.support for triple in chain.triples}

    def told(path: GraphPath) -> bool:  # every triple of it is in a supporting chain
        return all(hop.triple.key() in covered for hop in path.hops)

    lines = [
        line(path, chain.text, path.hops[0].triple.source)
        for path, chain in zip(supporting, answer.support, strict=True)
        if path.hops
    ]
    lines += [
        line(item.path, item.text, item.source)
        for item in answer.evidence.paths
        if not told(item.path)
    ]
    for fact in answer.evidence.triples:
        path = GraphPath((Hop(fact.triple),))
        if not told(path):
            lines.append(line(path, fact.text, fact.triple.source))
    return list(dict.fromkeys(lines))


def sources_text(
    answer: Answer,
    graphs: Sequence[KnowledgeGraph],
    *,
    answer_id: str | None,
    limit: int,
    literal_max_chars: int = 80,
    show_guess: bool = False,
) -> str:
    """The answer (``reply_text``), a note when a given answer is not grounded, then
    ``Sources:`` with up to ``limit`` numbered evidence lines and, when the answer is
    kept (``answer_id``), where to fetch all of it."""
    text = [reply_text(answer, show_guess=show_guess)]
    if answer.found and not answer.grounded:
        text += ["", NOT_GROUNDED]
    lines = evidence_lines(answer, graphs, literal_max_chars=literal_max_chars)
    if lines:
        text += ["", SOURCES_HEADING]
        text += [f"[{n}] {line}" for n, line in enumerate(lines[:limit], start=1)]
        if len(lines) > limit:
            text.append(f"... and {len(lines) - limit} more")
    if answer_id is not None:
        text.append(f"(full answer: GET /v1/answers/{answer_id})")
    return "\n".join(text)

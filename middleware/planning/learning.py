"""Learning a path memory from questions with known answers (``kgmw learn``).

Each question is masked at its topic (as the planner will mask a new one), its best
relation paths are mined, and the entry is stored under its key. The memory is
saved every ``save_every`` questions and at the end, so an interrupted run resumes:
questions already in a memory of the same, unchanged source are skipped.

One question never stops the run: mining that uses up the question's budget of
queries and seconds (``SearchBudget``), or a query past its timeout, skips it, and a
query the source refuses skips it too; each is counted with its reason. A source
that fails otherwise (down, unreachable) stops the run after the memory is saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import NamedNode

from middleware.errors import EndpointError, EndpointTimeout, QueryRejected
from middleware.kg.base import KnowledgeGraph
from middleware.planning.masking import mask_topic
from middleware.planning.memory import MemoryEntry, PathMemory, fingerprint
from middleware.planning.mining import bounded, mine
from middleware.planning.path_search import CAP, SearchBudget, SearchBudgetSpent, edges
from middleware.support.progress_bar import progress_bar
from middleware.text.embeddings.encoders import Encoder
from middleware.text.linking import EntityLinker


@dataclass(frozen=True)
class Lesson:
    """One question to learn from: its key, text, topic and gold answer IRIs."""

    key: str
    question: str
    topics: tuple[NamedNode, ...]
    answers: tuple[NamedNode, ...]
    topic_names: tuple[str, ...] = ()
    hops: str | None = None


@dataclass
class LearnReport:
    """What a learning run did."""

    learned: int = 0
    skipped: int = 0
    without_topic: int = 0
    without_answers: int = 0
    without_paths: int = 0
    over_budget: int = 0  # mining used up its queries or seconds, or a query timed out
    refused: int = 0  # the source refused one of its queries
    problems: list[str] = field(default_factory=list)  # "key: why", per skipped question
    warnings: list[str] = field(default_factory=list)


def learn(
    graph: KnowledgeGraph,
    memory: PathMemory,
    lessons: Sequence[Lesson],
    *,
    path: Path,
    linker: EntityLinker,
    encoder: Encoder,
    max_hops: int = 3,
    progress: bool = True,
    save_every: int = 200,
    cap: int = CAP,
    budget_queries: int = 500,
    budget_seconds: float = 30.0,
) -> LearnReport:
    """Mine ``lessons`` into ``memory`` and save it at ``path`` (vectors included)."""
    report = LearnReport()
    same_source = memory.fingerprint == fingerprint(graph)
    memory.fingerprint = fingerprint(graph)
    todo = [lesson for lesson in lessons if not (same_source and lesson.key in memory.entries)]
    report.skipped = len(lessons) - len(todo)
    with progress_bar(total=len(todo), unit="q", disable=not progress, dynamic_ncols=True) as bar:
        for done, lesson in enumerate(todo, start=1):
            budget = SearchBudget(queries=budget_queries, seconds=budget_seconds)
            try:
                _learn_one(graph, memory, lesson, linker, max_hops, report, cap, budget)
            except SearchBudgetSpent as err:
                report.over_budget += 1
                report.problems.append(f"{lesson.key}: over budget: {err.message}")
            except EndpointTimeout as err:
                report.over_budget += 1
                report.problems.append(f"{lesson.key}: a query ran past its timeout: {err.message}")
            except QueryRejected as err:
                report.refused += 1
                report.problems.append(f"{lesson.key}: a query was refused: {err.message}")
            except EndpointError as err:
                memory.save(path)
                raise EndpointError(
                    f"the source failed while learning {lesson.key!r} ({err.message}); "
                    f"the {len(memory.entries)} questions learned so far are saved in {path}",
                    hint="run the same command again when the source is back: it resumes",
                ) from err
            bar.set_postfix_str(f"{report.over_budget + report.refused} skipped", refresh=False)
            bar.update()
            if done % save_every == 0:
                memory.save(path)
    memory.vectors = encoder.encode([e.question for e in memory.entries.values()])
    memory.save(path)
    return report


def _learn_one(
    graph: KnowledgeGraph,
    memory: PathMemory,
    lesson: Lesson,
    linker: EntityLinker,
    max_hops: int,
    report: LearnReport,
    cap: int,
    budget: SearchBudget,
) -> None:
    topics = list(lesson.topics)
    if topics and bounded(graph):  # a dataset's topic the graph does not hold is none
        topics = [t for t in topics if edges(graph, t, cap=1, budget=budget)]
        if not topics:
            report.without_topic += 1
            report.problems.append(f"{lesson.key}: no topic entity of it has an edge in the graph")
            return
    if not topics:  # no topic from the dataset: the planner's own linking stands in
        topics = [entity.iri for _, entity in linker.spans(lesson.question)]
    if not topics:
        report.without_topic += 1
        return
    if not lesson.answers:
        report.without_answers += 1
        return
    mined = mine(graph, topics, list(lesson.answers), max_hops=max_hops, cap=cap, budget=budget)
    topic = NamedNode(mined[0].topic) if mined else topics[0]
    question = mask_topic(linker, lesson.question, topic, lesson.topic_names)
    memory.add(MemoryEntry(lesson.key, question, mined, lesson.hops))
    report.learned += 1
    if not mined:
        report.without_paths += 1

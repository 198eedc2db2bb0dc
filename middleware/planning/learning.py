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

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyoxigraph import NamedNode

from middleware.errors import EndpointError, StoreBusy
from middleware.kg.base import KnowledgeGraph
from middleware.kg.identity import reopener
from middleware.planning.masking import mask_topic
from middleware.planning.memory import MemoryEntry, PathMemory, fingerprint
from middleware.planning.mining_workers import (
    MinedQuestion,
    MiningJob,
    MiningLimits,
    mine_all,
)
from middleware.planning.path_search import CAP
from middleware.support.locks import LockTimeout, file_lock
from middleware.support.progress_bar import progress_bar
from middleware.text.embeddings.encoders import Encoder
from middleware.text.linking import EntityLinker


class LearnInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C or SIGTERM, after saving what it learned (the message says)."""


@dataclass(frozen=True)
class Lesson:
    """One question to learn from: its key, text, topic and gold answer IRIs."""

    key: str
    question: str
    topics: tuple[NamedNode, ...]
    answers: tuple[NamedNode, ...]
    topic_names: tuple[str, ...] = ()
    hops: str | None = None
    where: str = ""  # file:line of a question read from the user's own file

    @property
    def name(self) -> str:
        """How a problem report names the question: its key, and its line if known."""
        return f"{self.where} ({self.key})" if self.where else self.key


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
    workers: int = 1,
) -> LearnReport:
    """Mine ``lessons`` into ``memory`` and save it at ``path`` (vectors included).

    ``workers`` questions are mined at once: in processes that are killed when a
    question runs past its budget, over a store on disk; in threads otherwise
    (``mining_workers.py``). One run writes a memory file at a time (a lock beside
    it); an interrupted run (Ctrl-C, or SIGTERM as the CLI maps it) saves what it
    learned before it stops."""
    real = path.resolve()  # one lock for the file, whichever link names it
    lock = real.with_name(real.name + ".lock")
    limits = MiningLimits(max_hops, cap, budget_queries, budget_seconds)
    run = _LearnRun(graph, memory, real, linker, limits, workers)  # a link stays a link
    try:
        with file_lock(lock, timeout=0):
            try:
                run.all(lessons, progress=progress, save_every=save_every)
                memory.vectors = encoder.encode([e.question for e in memory.entries.values()])
                memory.save(real)
            except KeyboardInterrupt:
                memory.vectors = None  # the planner encodes the questions when it loads
                memory.save(real)
                raise LearnInterrupted(
                    f"{run.report.learned} question(s) learned in this run, and "
                    f"{len(memory.entries)} in all, are saved in {path}; run the same "
                    "command again to resume"
                ) from None
    except LockTimeout as err:
        raise StoreBusy(
            f"another run is writing the path memory {path} (its lock {lock} is held)",
            hint="wait for it to finish, or give this run its own file with --memory",
        ) from err
    return run.report


@dataclass
class _LearnRun:
    """One learning run: what it writes to, its limits, and its report."""

    graph: KnowledgeGraph
    memory: PathMemory
    path: Path
    linker: EntityLinker
    limits: MiningLimits
    workers: int
    report: LearnReport = field(default_factory=LearnReport)
    _problems: dict[int, str] = field(default_factory=dict)  # by lesson, ordered at the end

    def all(self, lessons: Sequence[Lesson], *, progress: bool, save_every: int) -> None:
        """Learn the lessons not yet in the memory, saving every ``save_every``."""
        memory, report = self.memory, self.report
        same_source = memory.fingerprint == fingerprint(self.graph)
        generated = [k for k, e in memory.entries.items() if e.generated]
        worded_now = memory.worded_at == fingerprint(self.graph)
        if not worded_now and memory.worded_at and generated:
            # worded from the graph as it was: dropped, not passed off as current
            for key in generated:
                del memory.entries[key]
            report.warnings.append(
                f"{len(generated)} entries generated from the graph before it was loaded "
                "again were dropped; run kgmw learn --from-graph again"
            )
        memory.fingerprint = fingerprint(self.graph)
        todo = [lesson for lesson in lessons if not (same_source and lesson.key in memory.entries)]
        report.skipped = len(lessons) - len(todo)
        memory.vectors = None  # stale once entries change; encoded again at the end
        bar = progress_bar(total=len(todo), unit="q", disable=not progress, dynamic_ncols=True)
        try:
            with bar:
                jobs = self.jobs(todo, bar)
                outcomes = mine_all(
                    self.graph,
                    jobs,
                    self.limits,
                    workers=self.workers,
                    opener=reopener(self.graph),  # a store on disk: killable processes
                )
                for done, outcome in enumerate(outcomes, start=1):
                    self.keep(todo[outcome.index], outcome)
                    bar.set_postfix_str(f"{len(self._problems)} not learned", refresh=False)
                    bar.update()
                    if done % save_every == 0:
                        memory.save(self.path)
        finally:  # the order an uninterrupted run gives: other entries, then the lessons'
            report.problems += [self._problems[i] for i in sorted(self._problems)]
            ours = {lesson.key: i for i, lesson in enumerate(lessons)}
            memory.entries = dict(
                sorted(memory.entries.items(), key=lambda kv: (kv[0] in ours, ours.get(kv[0], 0)))
            )

    def jobs(self, todo: list[Lesson], bar: Any) -> Iterator[MiningJob]:
        """A mining job per lesson with a topic and answers; the others are counted here."""
        report = self.report
        for index, lesson in enumerate(todo):
            topics = lesson.topics
            if not topics:  # no topic from the dataset: the planner's own linking stands in
                topics = tuple(entity.iri for _, entity in self.linker.spans(lesson.question))
                if not topics:
                    report.without_topic += 1
                    self._problems[index] = f"{lesson.name}: no entity of the graph is named in it"
                    bar.update()
                    continue
            if not lesson.answers:
                report.without_answers += 1
                self._problems[index] = f"{lesson.name}: no answer of it is an entity of the graph"
                bar.update()
                continue
            yield MiningJob(
                index,
                tuple(t.value for t in topics),
                tuple(a.value for a in lesson.answers),
                check_topics=bool(lesson.topics),
            )

    def keep(self, lesson: Lesson, outcome: MinedQuestion) -> None:
        """Store a mined lesson in the memory, or count and name why it was not."""
        report = self.report
        if outcome.kind == "failed":
            self.memory.save(self.path)
            raise EndpointError(
                f"the source failed while learning {lesson.name} ({outcome.message}); "
                f"{report.learned} question(s) learned in this run, and "
                f"{len(self.memory.entries)} in all, are saved in {self.path}",
                hint="run the same command again when the source is back: it resumes",
            )
        if outcome.kind == "no_topic":
            report.without_topic += 1
            self._problems[outcome.index] = (
                f"{lesson.name}: no topic entity of it has an edge in the graph"
            )
            return
        if outcome.kind != "mined":
            if outcome.kind == "refused":
                report.refused += 1
            else:
                report.over_budget += 1
            self._problems[outcome.index] = f"{lesson.name}: {outcome.message}"
            return
        mined = outcome.paths
        topic = NamedNode(mined[0].topic if mined else outcome.topics[0])
        question = mask_topic(self.linker, lesson.question, topic, lesson.topic_names)
        self.memory.add(MemoryEntry(lesson.key, question, mined, lesson.hops))
        report.learned += 1
        if not mined:
            report.without_paths += 1

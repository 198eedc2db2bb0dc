"""Run methods over question sets, one result line per (method, question).

Results are appended to ``results.jsonl`` as each question finishes, in task order,
so an interrupted run resumes where it stopped and produces the same file. A question
that fails is recorded with its error class and message; the run goes on.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from middleware.errors import LoadError, MiddlewareError
from middleware.eval.abstention import Abstention
from middleware.eval.items import EvalItem
from middleware.eval.scoring import Scorer, base_record, error_record, record_key
from middleware.llm.ledger import Budget
from middleware.methods.method import Method
from middleware.support.progress_bar import progress_bar

RESULTS_FILE = "results.jsonl"
RUNS_FILE = "runs.jsonl"


@dataclass(frozen=True)
class Task:
    """One method answering one question of one dataset split."""

    dataset: str
    split: str
    method: str
    item: EvalItem

    @property
    def key(self) -> str:
        return record_key(self.dataset, self.split, self.method, self.item.id)


def plan(
    datasets: Sequence[tuple[str, str, Sequence[EvalItem]]], methods: Sequence[str]
) -> list[Task]:
    """Every (dataset, method, question) in a fixed order: dataset, then method, then item."""
    return [
        Task(name, split, method, item)
        for name, split, items in datasets
        for method in methods
        for item in items
    ]


class ResultsFile:
    """An append-only JSONL of result records, safe to read after a crash.

    >>> import tempfile
    >>> results = ResultsFile(Path(tempfile.mkdtemp()) / "results.jsonl")
    >>> results.append({"key": "a", "hit": True})
    >>> with results.path.open("a") as f: _ = f.write('{"key": "b", "hi')  # killed mid-line
    >>> list(results.read())
    ['a']
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self, *, repair: bool = True) -> dict[str, dict[str, Any]]:
        """Records by key. A torn last line (the run was killed while writing) is ignored,
        and with ``repair`` cut off the file so the next append starts a clean line."""
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]  # a line without its newline is torn
        records: dict[str, dict[str, Any]] = {}
        for number, raw in enumerate(complete.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError as err:
                record = err
            if not isinstance(record, dict) or "key" not in record:
                raise LoadError(
                    str(self.path),
                    number,
                    f"not a result record: {raw[:80]!r}",
                    hint="remove that line (or the file) and run again",
                )
            records[record["key"]] = record
        if repair and len(complete) < len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(len(complete))
        return records

    def append(self, record: Mapping[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


@dataclass
class Tally:
    """Running counts per (dataset, method), for the progress bar and the summary.
    Hits@1 counts answerable questions only; abstentions are counted for all."""

    questions: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    hits: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    errors: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    abstention: dict[tuple[str, str], Abstention] = field(
        default_factory=lambda: defaultdict(Abstention)
    )

    def add(self, record: Mapping[str, Any]) -> None:
        group = (record["dataset"], record["method"])
        self.questions[group] += 1
        self.hits[group] += bool(record.get("hit"))
        self.errors[group] += record.get("error") is not None
        self.abstention[group].add(record)

    def accuracy(self, group: tuple[str, str]) -> float | None:
        """Hits@1 over the group's answerable questions (None without any)."""
        answerable = self.abstention[group].answerable
        return self.hits[group] / answerable if answerable else None

    def line(self) -> str:
        """Running Hits@1 of each method over all datasets so far: ``rok 0.22 io 0.02``."""
        hits: dict[str, int] = defaultdict(int)
        asked: dict[str, int] = defaultdict(int)
        for group in self.questions:
            hits[group[1]] += self.hits[group]
            asked[group[1]] += self.abstention[group].answerable
        return " ".join(f"{m} {hits[m] / n:.2f}" for m, n in asked.items() if n)


@dataclass
class EvalSummary:
    """What one ``Evaluator.run`` did."""

    total: int
    resumed: int
    answered: int
    failed: int
    tally: Tally
    seconds: float


class Evaluator:
    """Answers every task with its method, scores it and appends the record."""

    def __init__(
        self,
        methods: Mapping[str, Method],
        scorer: Scorer,
        results: ResultsFile,
        *,
        budget: Callable[[], Budget | None] = lambda: None,
        concurrency: int = 1,
        progress: bool = False,
    ) -> None:
        self.methods = methods
        self.scorer = scorer
        self.results = results
        self.budget = budget
        self.concurrency = max(1, concurrency)
        self.progress = progress

    def answer(self, task: Task) -> dict[str, Any]:
        """The record of one task. A MiddlewareError (a source down, a budget hit, a
        reply that does not parse) is recorded and the run goes on; anything else is a
        bug and stops the run (results so far are kept; a rerun resumes)."""
        record = base_record(task.dataset, task.split, task.method, task.item)
        item = task.item
        started = time.perf_counter()
        try:
            answer = self.methods[task.method].run(
                item.question, choices=list(item.choices) or None, budget=self.budget()
            )
            record.update(self.scorer.score(item, answer))
        except MiddlewareError as err:
            record.update(error_record(err, answerable=item.answerable))
            record["seconds"] = round(time.perf_counter() - started, 4)
        return record

    def run(self, tasks: Sequence[Task]) -> EvalSummary:
        started = time.perf_counter()
        done = self.results.read()
        tally = Tally()
        for task in tasks:
            if task.key in done:
                tally.add(done[task.key])
        pending = [t for t in tasks if t.key not in done]
        resumed = len(tasks) - len(pending)
        answered = failed = 0
        with progress_bar(
            total=len(tasks),
            initial=resumed,
            unit="q",
            disable=not self.progress,
            dynamic_ncols=True,
            mininterval=1.0,
        ) as bar:
            for record in self._records(pending):
                self.results.append(record)
                tally.add(record)
                answered += 1
                failed += record.get("error") is not None
                bar.update(1)
                bar.set_postfix_str(f"{record['dataset']} hits@1: {tally.line()}", refresh=False)
        return EvalSummary(
            len(tasks), resumed, answered, failed, tally, time.perf_counter() - started
        )

    def _records(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        """Records in task order; with concurrency, later tasks run while one is awaited."""
        if self.concurrency == 1:
            for task in tasks:
                yield self.answer(task)
            return
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="kgmw-eval")
        try:
            futures: list[Future[dict[str, Any]]] = [pool.submit(self.answer, t) for t in tasks]
            for future in futures:
                yield future.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

"""The runner: one record per (method, question), failures recorded, resumable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from middleware.errors import LLMError, LoadError
from middleware.eval.items import EvalItem
from middleware.eval.loaders import load_jsonl
from middleware.eval.runner import Evaluator, ResultsFile, plan
from middleware.eval.scoring import TIMING_KEYS, Scorer
from middleware.kg.backends.local import LocalStore
from middleware.kg.sample import sample_store
from middleware.llm.ledger import Budget
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.baselines import IO
from middleware.methods.rok import RoK
from tests.cli_helpers import rok_script
from tests.conftest import DATA

QUESTIONS = [
    EvalItem("q1", "Who directed Titanic?", ("James Cameron",)),
    EvalItem("q2", "Who starred in Titanic with Kate Winslet?", ("Leonardo DiCaprio",)),
    EvalItem("q3", "When was Titanic released?", ("1997",)),
    EvalItem("q4", "Which is a film?", ("Titanic",), ("Titanic", "Paris"), "Titanic"),
    EvalItem("q5", "Who directed Avatar?", ("James Cameron",)),
]


class Interrupt:
    """Replies like the script until call ``at``, then acts like Ctrl-C."""

    def __init__(self, at: int | None) -> None:
        self.at = at
        self.calls = 0

    def __call__(self, text: str) -> str:
        self.calls += 1
        if self.at is not None and self.calls >= self.at:
            raise KeyboardInterrupt
        if "Avatar" in text.rsplit("Question:", 1)[-1] and text.rstrip().endswith("Answer:"):
            raise LLMError("the model server went away")
        return "James Cameron"


def scripted(interrupt: Interrupt) -> ScriptedLLM:
    return rok_script(answer=interrupt, choice="Titanic")


@pytest.fixture(scope="module")
def graph() -> LocalStore:
    return sample_store()


def evaluator(
    graph: LocalStore, out: Path, at: int | None = None, concurrency: int = 1
) -> Evaluator:
    llm = scripted(Interrupt(at))
    return Evaluator(
        {"io": IO(llm, graph), "rok": RoK(llm, graph)},
        Scorer(graph),
        ResultsFile(out / "results.jsonl"),
        budget=lambda: Budget(max_calls=6),
        concurrency=concurrency,
    )


def tasks() -> list[Any]:
    return plan([("films", "dev", QUESTIONS)], ["io", "rok"])


def without_timing(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in row.items() if k not in TIMING_KEYS} for row in rows]


def test_records_hold_answer_scores_cost_and_failures(graph: LocalStore, tmp_path: Path) -> None:
    summary = evaluator(graph, tmp_path).run(tasks())
    assert (summary.total, summary.answered, summary.resumed, summary.failed) == (10, 10, 0, 2)
    rows = {r["key"]: r for r in without_timing(tmp_path / "results.jsonl")}
    assert list(rows) == [t.key for t in tasks()]
    q1 = rows["films/dev/rok/q1"]
    assert q1["prediction"] == "James Cameron" and q1["hit"] is True
    assert q1["evidence_recall"] is True and q1["llm_calls"] == 4 and q1["sparql_queries"] > 0
    assert q1["grounding"] == "paths" and q1["error"] is None and q1["rouge_l"] == 1.0
    assert q1["found"] is True and q1["guess"] is None and q1["support"] >= 1
    assert rows["films/dev/io/q1"]["evidence_recall"] is None  # IO uses no graph
    assert rows["films/dev/io/q3"]["hit"] is False
    choice = rows["films/dev/rok/q4"]
    assert choice["choice_correct"] is True and choice["hit"] is True and "rouge_l" not in choice
    failed = rows["films/dev/rok/q5"]
    assert failed["error"] == {"class": "LLMError", "message": "the model server went away"}
    assert failed["hit"] is False and failed["prediction"] is None
    assert summary.tally.accuracy(("films", "rok")) == pytest.approx(2 / 5)


def test_a_resumed_run_writes_the_same_file(graph: LocalStore, tmp_path: Path) -> None:
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    evaluator(graph, whole).run(tasks())
    with pytest.raises(KeyboardInterrupt):
        evaluator(graph, parts, at=6).run(tasks())  # stops inside the first RoK question
    done = len((parts / "results.jsonl").read_text().splitlines())
    assert 0 < done < 10
    # A write torn by the kill is cut off and redone.
    with (parts / "results.jsonl").open("a") as handle:
        handle.write('{"key": "films/dev/rok/q1", "hit": tr')
    summary = evaluator(graph, parts).run(tasks())
    assert summary.resumed == done and summary.answered == 10 - done
    assert without_timing(parts / "results.jsonl") == without_timing(whole / "results.jsonl")
    # Nothing left to do: a third run answers nothing and changes nothing.
    again = evaluator(graph, parts).run(tasks())
    assert again.answered == 0 and again.tally.accuracy(("films", "io")) == summary.tally.accuracy(
        ("films", "io")
    )


def test_concurrent_answers_are_written_in_task_order(graph: LocalStore, tmp_path: Path) -> None:
    evaluator(graph, tmp_path / "serial").run(tasks())
    evaluator(graph, tmp_path / "parallel", concurrency=3).run(tasks())
    assert without_timing(tmp_path / "parallel/results.jsonl") == without_timing(
        tmp_path / "serial/results.jsonl"
    )


def test_a_corrupt_line_inside_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"key": "a"}\nnot json\n{"key": "b"}\n')
    with pytest.raises(LoadError, match=r"results.jsonl:2: not a result record"):
        ResultsFile(path).read()


def test_own_jsonl_over_the_sample_graph(graph: LocalStore, tmp_path: Path) -> None:
    data = load_jsonl(DATA / "eval" / "own.jsonl")
    summary = evaluator(graph, tmp_path).run(plan([("own", "custom", data.items)], ["rok"]))
    assert summary.answered == 2 and summary.failed == 0


def test_a_bug_in_a_method_stops_the_run_and_keeps_what_was_written(
    graph: LocalStore, tmp_path: Path
) -> None:
    """Only MiddlewareErrors are recorded per question; a bug must not hide in the results."""

    class Broken:
        name = "broken"

        def run(self, question: str, **_: object) -> None:
            raise KeyError("a bug")

    results = ResultsFile(tmp_path / "results.jsonl")
    methods: dict[str, Any] = {"io": IO(scripted(Interrupt(None)), graph), "broken": Broken()}
    with pytest.raises(KeyError):
        Evaluator(methods, Scorer(graph), results).run(
            plan([("films", "dev", QUESTIONS[:1])], ["io", "broken"])
        )
    assert [r["method"] for r in without_timing(tmp_path / "results.jsonl")] == ["io"]


def test_unanswerable_questions_count_in_abstention_not_in_hits(
    graph: LocalStore, tmp_path: Path
) -> None:
    made_up = EvalItem("u1", "Who directed Zorblax Nine?", meta={"kind": "made-up-entity"})
    summary = evaluator(graph, tmp_path).run(
        plan([("films", "dev", [QUESTIONS[0], made_up])], ["io"])
    )
    rows = {r["id"]: r for r in without_timing(tmp_path / "results.jsonl")}
    assert rows["u1"]["hit"] is None and rows["u1"]["answerable"] is False
    assert rows["u1"]["abstained"] is False  # the scripted model names James Cameron
    assert summary.tally.accuracy(("films", "io")) == 1.0  # q1 right; u1 has no Hits@1
    assert summary.tally.abstention[("films", "io")].by_kind() == {"made-up-entity": 0.0}
    assert summary.tally.line() == "io 1.00"

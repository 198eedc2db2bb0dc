"""``kgmw eval`` and ``kgmw report`` with a scripted LLM over the sample graph."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from middleware import workspace as workspace_module
from middleware.cli import main
from middleware.llm.scripted import ScriptedLLM
from tests.cli_helpers import rok_script, run
from tests.conftest import DATA
from tests.eval import tiny_metaqa

EVAL = DATA / "eval"


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedLLM:
    llm = rok_script(choice="Titanic")
    monkeypatch.setattr(workspace_module, "open_llm", lambda settings: llm)
    return llm


def test_eval_resume_and_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scripted: ScriptedLLM
) -> None:
    out = tmp_path / "run"
    args = ["eval", "--dataset", str(EVAL / "own.jsonl"), "--method", "io", "--method", "rok"]
    code, stdout, err = run(capsys, *args, "--out", str(out), "--no-progress")
    assert code == 0, err
    assert "own (custom): 2 of 2 questions; 4 malformed lines skipped" in err
    assert "own.jsonl:3: the answer 'Rome' is not one of the choices" in err
    assert "own      rok     2          1.000   0.000      0" in stdout
    assert "4 answered (0 failed), 0 already done" in stdout
    assert len((out / "results.jsonl").read_text().splitlines()) == 4
    code, stdout, _ = run(capsys, *args, "--out", str(out), "--no-progress", "--json")
    summary = json.loads(stdout)
    assert (summary["answered"], summary["resumed"]) == (0, 4)
    assert summary["groups"][0] == {
        "dataset": "own",
        "method": "io",
        "questions": 2,
        "hits_at_1": 1.0,
        "errors": 0,
        "answerable": 2,
        "unanswerable": 0,
        "abstained": 0.0,
        "abstained_answerable": 0.0,
        "abstained_by_kind": {},
    }
    code, stdout, _ = run(capsys, "report", str(out))
    assert code == 0 and stdout.splitlines()[0] == str(out / "report.md")
    assert "| own | custom | rok | 2 | 100.0 (100.0–100.0) |" in (out / "report.md").read_text()


def test_eval_metaqa_sample_with_limit_and_graph_filter(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scripted: ScriptedLLM
) -> None:
    code, _stdout, err = run(
        capsys,
        "eval",
        "--dataset", "metaqa-1hop",
        "--data-dir", str(EVAL),
        "--limit", "2",
        "--seed", "1",
        "--only-in-graph",
        "--method", "io",
        "--out", str(tmp_path),
        "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert "metaqa-1hop (dev): 2 of 3 questions (seed 1); 3 malformed lines skipped" in err
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["meta"]["hops"] for r in rows] == ["1", "1"]
    notes = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert notes[0]["methods"] == ["io"] and notes[0]["graph"] == "sample"
    assert notes[0]["datasets"] == [{"name": "metaqa-1hop", "split": "dev", "questions": 2}]


def test_eval_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "eval", "--dataset", "nope", "--out", str(tmp_path))
    assert code == 2 and err.startswith("kgmw: error: unknown dataset 'nope'")
    code, _, err = run(
        capsys, "eval", "--dataset", "webquestions", "--data-dir", str(EVAL), "--out", str(tmp_path)
    )
    assert code == 2 and "webquestions has no 'dev' split here (use --split test)" in err
    code, _, err = run(capsys, "report", str(tmp_path))
    assert code == 2 and "no results.jsonl" in err


def test_eval_webquestions_over_fb15k_keeps_questions_in_the_graph(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scripted: ScriptedLLM
) -> None:
    store = tmp_path / "fb"
    load = ["load", "--recipe", "fb15k-237", "--data-dir", str(EVAL), "--store", str(store)]
    assert main([*load, "--no-progress"]) == 0
    code, _, err = run(
        capsys,
        "eval",
        "--dataset", "webquestions",
        "--split", "test",
        "--data-dir", str(EVAL),
        "--only-in-graph",
        "--method", "rok",
        "--store", str(store),
        "--out", str(tmp_path / "out"),
        "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert "webquestions (test): 2 of 2 questions; 2 malformed lines skipped" in err
    assert "1 questions dropped: topic entity not in the graph" in err
    rows = [json.loads(line) for line in (tmp_path / "out/results.jsonl").read_text().splitlines()]
    assert [r["question"] for r in rows] == [
        "who directed titanic?",
        "where was kate winslet born?",
    ]
    assert rows[0]["hit"] is True and rows[0]["evidence_recall"] is True


def test_eval_with_the_embedded_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two questions over the sample graph, RoK and IO, with the real embedded model."""
    args = ["eval", "--dataset", str(EVAL / "own.jsonl"), "--method", "rok", "--method", "io"]
    code, _, err = run(capsys, *args, "--out", str(tmp_path), "--no-progress", "--no-cache")
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [(r["method"], r["id"]) for r in rows] == [
        ("rok", "a"), ("rok", "line-2"), ("io", "a"), ("io", "line-2")
    ]  # fmt: skip
    assert all(r["error"] is None and r["llm_calls"] >= 1 for r in rows)
    assert all(r["prompt_tokens"] > 0 and r["seconds"] > 0 for r in rows)
    assert rows[0]["evidence_recall"] is not None and rows[0]["sparql_queries"] > 0
    assert rows[1]["prediction"] in ("Titanic", "Paris")  # a constrained choice
    assert isinstance(rows[0]["hit"], bool) and "rouge_l" in rows[0]
    code, _, _ = run(capsys, "report", str(tmp_path))
    assert code == 0 and (tmp_path / "accuracy_by_method.png").is_file()


def knows_the_kb(prompt: str) -> str:
    """The IO model of a tiny MetaQA: names Michael Mann when the question holds a name
    of the graph, else says the graph does not hold the answer."""
    question = prompt.rsplit("Question:", 1)[-1]
    names = {n for s, _, o in tiny_metaqa.triples() for n in (s, o)}
    known = any(re.search(rf"\b{re.escape(n)}\b", question) for n in names)
    return "Michael Mann" if known else "Not found in the graph."


def test_eval_unanswerable_metaqa_with_metaqa_reports_abstention(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = ScriptedLLM([("Answer:$", knows_the_kb)])
    monkeypatch.setattr(workspace_module, "open_llm", lambda settings: llm)
    data = tiny_metaqa.write_metaqa(tmp_path / "data")
    out = tmp_path / "run"
    code, stdout, err = run(
        capsys,
        "eval",
        "--dataset", "metaqa-1hop",
        "--dataset", "unanswerable-metaqa",
        "--data-dir", str(data),
        "--limit", "4",
        "--seed", "1",
        "--method", "io",
        "--out", str(out),
        "--no-progress",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    assert "unanswerable-metaqa (dev): 4 of 34 questions (seed 1)" in err
    assert "17 questions of each kind, not 100" in err
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    made_up = [r for r in rows if r["meta"].get("kind") == "made-up-entity"]
    # a made-up name with a real word of the graph in it ("Nine") draws an answer
    assert [(r["meta"]["real_word"], r["abstained"]) for r in made_up] == [
        ("", True),
        ("Nine", False),
    ]
    metaqa, unanswerable = json.loads(stdout)["groups"]
    assert metaqa == {
        "dataset": "metaqa-1hop",
        "method": "io",
        "questions": 4,
        "hits_at_1": metaqa["hits_at_1"],
        "errors": 0,
        "answerable": 4,
        "unanswerable": 0,
        "abstained": 0.0,
        "abstained_answerable": 0.0,
        "abstained_by_kind": {},
    }
    assert unanswerable["hits_at_1"] is None and unanswerable["abstained"] == 0.25
    assert unanswerable["abstained_by_kind"] == {"made-up-entity": 0.5, "absent-relation": 0.0}
    code, stdout, _ = run(capsys, "eval", "--dataset", "unanswerable-metaqa", "--data-dir",
                          str(data), "--limit", "4", "--seed", "1", "--method", "io", "--out",
                          str(out), "--no-progress")  # fmt: skip
    assert code == 0
    assert "hits@1  abstained  abstained (answerable)  abstained (made-up-entity)" in stdout
    assert "unanswerable-metaqa  io      4          –       0.250      –" in stdout
    code, _, _ = run(capsys, "report", str(out))
    assert code == 0 and "## Abstention" in (out / "report.md").read_text()

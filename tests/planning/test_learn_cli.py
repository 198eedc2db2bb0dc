"""``kgmw learn`` and ``kgmw ask --method plan`` over a store of the films graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from middleware import workspace as workspace_module
from middleware.planning.memory import FILE_NAME
from middleware.testing.graphs import EX, films_path
from middleware.testing.llms import first_option_or
from tests.cli_helpers import run

QUESTIONS = [
    {
        "id": "1",
        "question": "Which film shares a director with Titanic?",
        "answers": ["Avatar"],
        "topic_entities": [EX + "Titanic"],
    },
    {"id": "2", "question": "Who directed Inception?", "answers": ["Christopher Nolan"]},
    {"id": "3", "question": "Who starred in Avatar?", "answers": ["Zoë Saldaña"]},
]


@pytest.fixture
def store(films_folder: Path) -> Path:
    return films_folder


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / "films.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    return path


def ask_plan(capsys: pytest.CaptureFixture[str], store: Path, question: str) -> dict[str, Any]:
    """``kgmw ask QUESTION --method plan --json`` over the store, its answer as JSON."""
    code, out, err = run(
        capsys, "ask", question, "--method", "plan", "--store", str(store), "--json"
    )
    assert code == 0, err
    answer: dict[str, Any] = json.loads(out)
    return answer


def learn(capsys: pytest.CaptureFixture[str], questions: Path, *extra: str) -> tuple[int, str, str]:
    return run(capsys, "learn", "--dataset", str(questions), "--no-progress", *extra)


def test_learn_writes_the_memory_into_the_store_and_resumes(
    capsys: pytest.CaptureFixture[str], store: Path, questions: Path
) -> None:
    code, out, err = learn(capsys, questions, "--store", str(store))
    assert code == 0, err
    assert "learned 3 question(s)" in out and "3 entries" in out
    saved = json.loads((store / FILE_NAME).read_text())
    assert (
        saved["counts"]["with_paths"] == 3
        and saved["learned_from"][0]["datasets"][0]["questions"] == 3
    )
    code, out, _ = learn(capsys, questions, "--store", str(store))
    assert code == 0 and "(3 already in the memory" in out


def test_plan_answers_from_the_learned_memory(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    store: Path,
    questions: Path,
) -> None:
    assert learn(capsys, questions, "--store", str(store))[0] == 0
    llm = first_option_or("Ada Lovelace")
    monkeypatch.setattr(workspace_module, "open_llm", lambda settings: llm)
    answer = ask_plan(capsys, store, "Which film shares a director with Avatar?")
    assert (
        answer["answer"] == "Titanic" and answer["grounded"] and answer["usage"]["llm_calls"] == 0
    )
    plan = next(s for s in answer["steps"] if s["name"] == "plan")["parsed"]
    assert plan["mode"] == "learned" and plan["plans"][0]["walks"] == 1
    assert answer["evidence"]["paths"]


def test_bad_input_writes_nothing(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path, questions: Path
) -> None:
    code, _, err = learn(capsys, tmp_path / "missing.jsonl", "--store", str(store))
    assert code != 0 and "missing.jsonl" in err
    assert not (store / FILE_NAME).exists()
    code, _, err = learn(capsys, questions, "--store", str(store), "--folds", "3")
    assert code == 2 and "--folds K and --fold I together" in err
    assert not (store / FILE_NAME).exists()


def test_a_memory_of_another_store_is_refused(
    capsys: pytest.CaptureFixture[str], store: Path, questions: Path, tmp_path: Path
) -> None:
    memory = tmp_path / "mine.json"
    assert learn(capsys, questions, "--store", str(store), "--memory", str(memory))[0] == 0
    other = tmp_path / "other"
    assert run(capsys, "load", str(films_path()), "--store", str(other), "--no-progress")[0] == 0
    code, _, err = learn(capsys, questions, "--store", str(other), "--memory", str(memory))
    assert code != 0 and "learned on store" in err and "kgmw learn" in err


@pytest.mark.slow
def test_plan_end_to_end_with_the_embedded_model(capsys: pytest.CaptureFixture[str]) -> None:
    """Zero-shot over the bundled sample graph with the real LLM and encoder."""
    code, out, err = run(
        capsys, "ask", "Which films did James Cameron direct?", "--method", "plan", "--json"
    )
    assert code == 0, err
    answer = json.loads(out)
    assert answer["evidence"]["paths"], "the plan's own example must not answer from empty evidence"
    cameron_films = {"Titanic", "Avatar", "Aliens", "True Lies", "The Abyss", "The Terminator"}
    assert any(film in answer["answer"] for film in cameron_films), answer["answer"]


def test_blank_answers_and_an_over_budget_question_do_not_stop_learning(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "blank.jsonl"
    rows = [
        {**QUESTIONS[0], "answers": ["Avatar", " "]},  # the WebQuestions file has such
        {"id": "b", "question": "Who directed Avatar?", "answers": [" "]},
        QUESTIONS[1],
    ]
    path.write_text("\n".join(json.dumps(q) for q in rows) + "\n")
    code, out, err = learn(capsys, path, "--store", str(store))
    assert code == 0, err
    assert "learned 2 question(s)" in out  # the line with only a blank answer is malformed
    assert f"{path}:2: no answer: give at least one non-blank answer" in err
    # a budget too small for the 2-hop question: skipped, named, and the run completes
    again = tmp_path / "again.jsonl"
    again.write_text(json.dumps({**QUESTIONS[0], "id": "9"}) + "\n")
    monkeypatch.setenv("KGMW_PLAN_LEARN_QUERIES", "10")
    code, out, err = learn(capsys, again, "--store", str(store))
    assert code == 0, err
    assert "skipped 1 question(s): 1 over their budget" in out
    assert "again.jsonl:1 (again/custom/9): over budget: mining used its budget" in out


def test_a_topic_id_the_graph_does_not_hold_is_no_topic(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    path = tmp_path / "unknown.jsonl"
    rows = [{**QUESTIONS[0], "id": "u", "topic_entities": [EX + "NoSuchFilm"]}, QUESTIONS[0]]
    path.write_text("\n".join(json.dumps(q) for q in rows) + "\n")
    code, out, err = run(
        capsys, "learn", "--dataset", str(path), "--store", str(store), "--no-progress", "--json"
    )
    assert code == 0, err
    report = json.loads(out)["report"]
    assert report["learned"] == 1 and report["without_topic"] == 1
    assert any(
        p.endswith("(unknown/custom/u): no topic entity of it has an edge in the graph")
        for p in report["problems"]
    )


def test_learn_from_the_graph_needs_no_questions(
    capsys: pytest.CaptureFixture[str], store: Path
) -> None:
    code, out, err = run(capsys, "learn", "--from-graph", "--store", str(store), "--no-progress")
    assert code == 0, err
    assert "relation paths found" in out and "generated entries" in out
    saved = json.loads((store / FILE_NAME).read_text())
    assert saved["counts"]["generated"] == saved["counts"]["entries"] > 0
    answer = ask_plan(capsys, store, "Who directed Inception?")
    plan = next(s for s in answer["steps"] if s["name"] == "plan")["parsed"]
    assert plan["mode"] == "generated" and plan["plans"][0]["generated"] is True
    assert "Christopher Nolan" in (answer["answer"] or answer["guess"]["answer"])


def test_learn_from_the_graph_refuses_questions_in_the_same_run(
    capsys: pytest.CaptureFixture[str], store: Path, questions: Path
) -> None:
    code, _, err = learn(capsys, questions, "--from-graph", "--store", str(store))
    assert code == 2 and "--from-graph learns with no questions" in err


def test_learn_without_questions_or_the_graph_says_what_to_give(
    capsys: pytest.CaptureFixture[str], store: Path
) -> None:
    code, _, err = run(capsys, "learn", "--store", str(store), "--no-progress")
    assert code == 2 and "--dataset NAME" in err and "--from-graph" in err


@pytest.mark.parametrize(
    "extra",
    [("--limit", "5"), ("--folds", "5", "--fold", "0"), ("--workers", "2"), ("--minutes", "nan")],
)
def test_learn_from_the_graph_refuses_options_it_would_ignore(
    capsys: pytest.CaptureFixture[str], store: Path, extra: tuple[str, ...]
) -> None:
    code, _, err = run(capsys, "learn", "--from-graph", "--store", str(store), *extra)
    assert (code == 2 and extra[0] in err) or "minutes" in err

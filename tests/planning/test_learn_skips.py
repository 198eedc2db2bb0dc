"""``kgmw learn`` over a file with bad lines and bad questions: each is skipped and
named with its file and line, the rest is learned; one run writes a memory at a time,
and an interrupted run keeps what it learned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from middleware.planning import learning, mining_workers
from middleware.planning.memory import FILE_NAME
from middleware.support.locks import file_lock
from middleware.testing.graphs import EX
from tests.cli_helpers import run

GOOD = {"id": "1", "question": "Who directed Inception?", "answers": ["Christopher Nolan"]}
LINES = [
    json.dumps(GOOD),
    json.dumps({"id": "2", "question": "Who directed Avatar?", "answers": [" "]}),
    json.dumps({"id": "3", "question": "Who directed Avatar?", "answers": []}),
    json.dumps({"id": "1", "question": "Who starred in Avatar?", "answers": ["Zoë Saldaña"]}),
    '{"id": "5", "question": "Who directed Heat?"',
    json.dumps({"id": "6", "question": "Who directed Zqxjv Blorp?", "answers": ["James Cameron"]}),
    json.dumps(
        {
            "id": "7",
            "question": "Which film shares a director with Titanic?",
            "answers": ["Avatar"],
            "topic_entities": [EX + "NoSuchFilm"],
        }
    ),
    json.dumps({"id": "8", "question": "Who directed Titanic?", "answers": ["Nobody Atall"]}),
]


@pytest.fixture
def store(films_folder: Path) -> Path:
    return films_folder


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(LINES) + "\n")
    return path


def learn(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run(capsys, "learn", "--dataset", *args, "--no-progress")


def test_each_bad_line_and_question_is_named_with_its_line(
    capsys: pytest.CaptureFixture[str], store: Path, questions: Path
) -> None:
    code, out, err = learn(capsys, str(questions), "--store", str(store), "--json")
    assert code == 0, err
    result = json.loads(out)
    where = str(questions)
    assert result["malformed"] == [
        f"{where}:2: no answer: give at least one non-blank answer",
        f"{where}:3: no answer: give at least one non-blank answer",
        f"{where}:5: not valid JSON: Expecting ',' delimiter",
        f"{where}:4: id '1' is already used on line 1",
    ]
    assert sorted(result["report"]["problems"]) == [
        f"{where}:6 (mixed/custom/6): no entity of the graph is named in it",
        f"{where}:7 (mixed/custom/7): no topic entity of it has an edge in the graph",
        f"{where}:8 (mixed/custom/8): no answer of it is an entity of the graph",
    ]
    report = result["report"]
    assert (report["learned"], report["without_topic"], report["without_answers"]) == (1, 2, 1)
    assert err.count(":5: not valid JSON") == 1  # said once, not by the loader and again
    saved = json.loads((store / FILE_NAME).read_text())
    assert [e["question"] for e in saved["entries"]] == ["who directed NE?"]


def test_the_table_lists_what_was_not_learned(
    capsys: pytest.CaptureFixture[str], store: Path, questions: Path
) -> None:
    code, out, err = learn(capsys, str(questions), "--store", str(store))
    assert code == 0, err
    assert "not learned (3):" in out and ":8 (mixed/custom/8): no answer of it" in out
    assert "not given" in out and "None" not in out  # the hops of a file of your own


def test_a_second_run_on_the_same_memory_is_refused_while_the_first_runs(
    capsys: pytest.CaptureFixture[str], store: Path, questions: Path
) -> None:
    with file_lock(store / (FILE_NAME + ".lock")):
        code, _, err = learn(capsys, str(questions), "--store", str(store))
    assert code == 2 and "another run is writing the path memory" in err
    assert not (store / FILE_NAME).exists()


def test_an_interrupted_run_saves_what_it_learned_and_resumes(
    capsys: pytest.CaptureFixture[str],
    store: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "three.jsonl"
    rows = [GOOD, {**GOOD, "id": "2"}, {**GOOD, "id": "3"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    real = mining_workers.mine_question
    calls: list[int] = []

    def stop_at_the_second(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # what SIGTERM becomes under kgmw learn
        return real(*args)

    monkeypatch.setattr(mining_workers, "mine_question", stop_at_the_second)
    monkeypatch.setattr(learning, "reopener", lambda graph: None)  # mine in this process
    code, _, err = learn(capsys, str(path), "--store", str(store), "--workers", "1")
    assert code == 130
    assert "interrupted: 1 question(s) learned in this run, and 1 in all, are saved" in err
    assert len(json.loads((store / FILE_NAME).read_text())["entries"]) == 1
    monkeypatch.undo()
    code, out, err = learn(capsys, str(path), "--store", str(store))
    assert code == 0 and "(1 already in the memory" in out


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_a_line_no_file_can_hold_is_skipped_and_the_rest_learned(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    good = json.dumps(GOOD).encode()
    path = write_lines(
        tmp_path / "odd.jsonl",
        [
            b"\xef\xbb\xbf" + good,  # a byte order mark before the first line
            b'{"id": "s", "question": "Who directed \\ud800?", "answers": ["x"]}',
            b'{"id": "l", "question": "Who directed \xe9t\xe9?", "answers": ["x"]}',
            b'{"id": null, "question": "Who directed Avatar?", "answers": ["James Cameron"]}',
            b'{"id": "", "question": "Who directed Avatar?", "answers": ["James Cameron"]}',
            b'{"id": true, "question": "Who directed Avatar?", "answers": ["James Cameron"]}',
        ],
    )
    code, out, err = learn(capsys, str(path), "--store", str(store), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["malformed"] == [
        f"{path}:2: holds a lone surrogate escape (such as \\ud800): not text",
        f"{path}:3: not UTF-8 text: invalid continuation byte at byte 39",
        f"{path}:5: id is blank: give a name, or leave id out (the line number)",
        f"{path}:6: id must be a string or an integer",
    ]
    saved = json.loads((store / FILE_NAME).read_text())
    assert [e["key"] for e in saved["entries"]] == ["odd/custom/1", "odd/custom/line-4"]


def test_two_question_files_of_one_name_are_refused(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "q.jsonl").write_text(json.dumps(GOOD) + "\n")
    code, _, err = learn(
        capsys,
        str(tmp_path / "a" / "q.jsonl"),
        "--dataset",
        str(tmp_path / "b" / "q.jsonl"),
        "--store",
        str(store),
    )
    assert code == 2 and "two question sets are both named 'q'" in err and "rename one" in err


def test_the_lock_holds_for_the_file_whatever_link_names_it(
    capsys: pytest.CaptureFixture[str], store: Path, questions: Path, tmp_path: Path
) -> None:
    real = tmp_path / "memory.json"
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with file_lock(tmp_path / "memory.json.lock"):
        code, _, err = learn(capsys, str(questions), "--store", str(store), "--memory", str(link))
    assert code == 2 and "another run is writing the path memory" in err
    code, _, err = learn(capsys, str(questions), "--store", str(store), "--memory", str(link))
    assert code == 0, err
    assert link.is_symlink() and json.loads(real.read_text())["entries"]  # written through


def test_a_topic_id_that_names_no_iri_is_said(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    path = tmp_path / "ids.jsonl"
    path.write_text(json.dumps({**GOOD, "topic_entities": ["Inception"]}) + "\n")
    code, _, err = learn(capsys, str(path), "--store", str(store))
    assert code == 0
    assert f"{path}:1: topic_entities 'Inception' name no IRI under profile 'generic'" in err

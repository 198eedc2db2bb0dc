"""Dataset loaders on small fixture files in each format, malformed lines included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from middleware.errors import BadRequest, LoadError
from middleware.eval.datasets import DATASETS, load_dataset, sample
from middleware.eval.items import EvalItem
from middleware.eval.loaders import load_jsonl, load_metaqa, load_webquestions
from tests.conftest import DATA

EVAL = DATA / "eval"


def test_metaqa_questions_answers_topics_and_types() -> None:
    data = load_dataset("metaqa-1hop", split="dev", data_dir=EVAL)
    assert [i.id for i in data.items] == ["1hop-dev-1", "1hop-dev-2", "1hop-dev-7"]
    first = data.items[0]
    assert first.question == "what movies did James Cameron direct"
    assert first.answers == ("Titanic", "Avatar")
    assert first.topic_entities == ("James Cameron",)
    assert first.meta == {"hops": "1", "qtype": "director_to_movie"}
    assert data.items[2].meta["qtype"] == "movie_to_year"
    path = EVAL / "metaqa/1-hop/qa_dev.txt"
    assert data.report.loaded == 3 and data.report.skipped == 3
    assert data.report.problems == [
        f"{path}:3: no tab between the question and its answers",
        f"{path}:4: empty question or no answer",
        f"{path}:5: no [topic entity] in the question",
    ]


def test_metaqa_type_file_of_another_length_is_ignored_and_said(tmp_path: Path) -> None:
    (tmp_path / "qa_dev.txt").write_text("who directed [Heat]\tMichael Mann\n")
    (tmp_path / "qa_dev_qtype.txt").write_text("a\nb\n")
    data = load_metaqa(tmp_path / "qa_dev.txt", hops=1)
    assert "qtype" not in data.items[0].meta
    assert "2 question types for 1 questions" in data.report.problems[0]


def test_webquestions_with_lines_and_a_graph_filter() -> None:
    data = load_dataset("webquestions", split="test", data_dir=EVAL)
    assert [(i.question, i.answers, i.topic_entities) for i in data.items] == [
        ("who directed titanic?", ("James Cameron",), ("m.0dr_4",)),
        ("where was kate winslet born?", ("Reading",), ("m.0gd_s",)),
        ("what is not in the graph?", ("Nothing",), ("m.0zzz",)),
    ]
    path = EVAL / "webquestions/WebQuestions.json"
    assert data.report.problems == [
        f"{path}:7: answers is not a list of names",
        f"{path}:12: no question text",
    ]
    kept = load_webquestions(path, keep=lambda item: "m.0gd_s" in item.topic_entities)
    assert [i.answers for i in kept.items] == [("Reading",)]
    assert kept.report.problems[-1].endswith("2 questions dropped: topic entity not in the graph")


def test_commonsenseqa_and_openbookqa_are_multiple_choice() -> None:
    csqa = load_dataset("commonsenseqa", split="dev", data_dir=EVAL)
    assert [i.id for i in csqa.items] == ["csqa-q1", "csqa-q4"]
    assert csqa.items[1].choices == ("wear hats", "talk to each other")
    assert csqa.items[1].answer_key == "talk to each other" and csqa.multiple_choice
    assert csqa.report.skipped == 2
    assert any(":2: answerKey 'C' names no choice" in p for p in csqa.report.problems)
    assert any(":3: not valid JSON" in p for p in csqa.report.problems)
    obqa = load_dataset("openbookqa", split="dev", data_dir=EVAL)
    assert [(i.question, i.answer_key) for i in obqa.items] == [("Gas fills", "any container")]
    assert [p.rsplit(":", 1)[0].rsplit(":", 1)[1] for p in obqa.report.problems] == ["2", "3"]


def test_qald_english_questions_with_binding_and_boolean_answers() -> None:
    data = load_dataset("qald-10", split="test", data_dir=EVAL)
    assert [(i.question, i.answers) for i in data.items] == [
        ("Who directed Titanic?", ("http://example.org/film/Cameron",)),
        ("Is Titanic a film?", ("yes",)),
    ]
    assert data.report.problems == [
        f"{EVAL / 'qald-10/qald_10.json'}:9: no question in language 'en'"
    ]


def test_own_jsonl() -> None:
    data = load_jsonl(EVAL / "own.jsonl")
    assert data.items[0] == EvalItem(
        "a", "Who directed Titanic?", ("James Cameron",), topic_entities=("Titanic",)
    )
    assert data.items[1].choices == ("Titanic", "Paris") and data.items[1].answer_key == "Titanic"
    reasons = [p.split(": ", 1)[1] for p in data.report.problems]
    assert reasons == [
        "the answer 'Rome' is not one of the choices",
        "no question text",
        "not valid JSON: Expecting value",
        "no answer: give at least one non-blank answer",
    ]
    assert data.report.skipped == 4


def test_files_that_cannot_be_used_at_all(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file"):
        load_jsonl(tmp_path / "missing.jsonl")
    (tmp_path / "bad.jsonl").write_text("nope\n")
    with pytest.raises(LoadError, match=r"no usable question.*not valid JSON"):
        load_jsonl(tmp_path / "bad.jsonl")
    (tmp_path / "broken.json").write_text('[{"question": "x",\n')
    with pytest.raises(LoadError, match=r"broken.json:2: not valid JSON"):
        load_webquestions(tmp_path / "broken.json")
    (tmp_path / "object.json").write_text(json.dumps({"questions": 3}))
    with pytest.raises(LoadError, match="expected a JSON list"):
        load_webquestions(tmp_path / "object.json")


def test_names_splits_and_folders() -> None:
    assert {"metaqa-1hop", "metaqa-2hop", "metaqa-3hop", "webquestions", "qald-10"} <= set(DATASETS)
    with pytest.raises(BadRequest, match="unknown dataset 'nope'"):
        load_dataset("nope", split="dev", data_dir=EVAL)
    with pytest.raises(BadRequest, match=r"no 'dev' split.*--split test"):
        load_dataset("webquestions", split="dev", data_dir=EVAL)
    with pytest.raises(BadRequest, match="needs --data-dir"):
        load_dataset("metaqa-1hop", split="dev", data_dir=None)
    # The dataset's own folder works as well as the root holding it.
    own_folder = load_dataset("metaqa-1hop", split="dev", data_dir=EVAL / "metaqa")
    assert len(own_folder.items) == 3


def test_sample_is_seeded_and_keeps_file_order() -> None:
    items = [EvalItem(str(i), f"q{i}") for i in range(50)]
    first = sample(items, limit=10, seed=3)
    assert first == sample(items, limit=10, seed=3)
    assert first != sample(items, limit=10, seed=4)
    assert [int(i.id) for i in first] == sorted(int(i.id) for i in first)

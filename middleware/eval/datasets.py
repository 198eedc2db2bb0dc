"""Question sets with gold answers, read from the files their authors publish.

Every loader takes a path (nothing is downloaded) and returns a :class:`Dataset`:
its items plus a :class:`LoadReport` naming each malformed line as ``file:line``.
A malformed line is skipped and counted, never fatal; a file that cannot be read
at all, or holds no usable question, raises :class:`LoadError`.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "qa_dev.txt").write_text("who directed [Heat]\\tMichael Mann\\nbroken line\\n")
>>> data = load_metaqa(folder / "qa_dev.txt", hops=1)
>>> data.items[0].answers, data.items[0].topic_entities, data.report.skipped
(('Michael Mann',), ('Heat',), 1)
>>> data.report.problems[0].endswith("qa_dev.txt:2: no tab between the question and its answers")
True
"""

from __future__ import annotations

import json
import logging
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from middleware.errors import BadRequest, LoadError

log = logging.getLogger(__name__)

_TOPIC = re.compile(r"\[([^\]]+)\]")


@dataclass(frozen=True)
class EvalItem:
    """One question with its gold answers.

    ``answers`` are names (or IRIs, for QALD); ``answer_key`` is the text of the
    correct choice for multiple-choice sets; ``topic_entities`` are the dataset's
    own keys for the question's entities (a MetaQA name, a Freebase ``m.`` id).
    """

    id: str
    question: str
    answers: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    answer_key: str | None = None
    topic_entities: tuple[str, ...] = ()
    meta: dict[str, str] = field(default_factory=dict, compare=False, hash=False)


@dataclass
class LoadReport:
    """What a loader read: how many items, and each skipped line with its reason."""

    path: str
    loaded: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)

    def skip(self, line: int | None, why: str) -> None:
        where = f"{self.path}:{line}" if line is not None else self.path
        self.skipped += 1
        self.problems.append(f"{where}: {why}")
        log.warning("%s: %s (skipped)", where, why)


@dataclass
class Dataset:
    """A named question set and the report of how it was read."""

    name: str
    split: str
    items: list[EvalItem]
    report: LoadReport

    @property
    def multiple_choice(self) -> bool:
        return any(item.choices for item in self.items)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as err:
        raise LoadError(str(path), None, "no such file", hint="check --data-dir") from err
    except UnicodeDecodeError as err:
        raise LoadError(str(path), None, f"not UTF-8 text: {err.reason}") from err
    except OSError as err:
        raise LoadError(str(path), None, f"cannot read: {err.strerror or err}") from err


def _finish(name: str, split: str, items: list[EvalItem], report: LoadReport) -> Dataset:
    report.loaded = len(items)
    if not items:
        detail = f"; first problem: {report.problems[0]}" if report.problems else ""
        raise LoadError(report.path, None, f"no usable question in the file{detail}")
    return Dataset(name, split, items, report)


def load_metaqa(path: Path, *, hops: int, split: str = "dev") -> Dataset:
    """MetaQA vanilla ``qa_*.txt``: ``question with [topic]<TAB>answer1|answer2``.

    The brackets are taken off the question (methods see it as a user would write it);
    the bracketed names become ``topic_entities``. The question type comes from
    ``qa_*_qtype.txt`` beside it when present.
    """
    report = LoadReport(str(path))
    lines = _read_text(path).splitlines()
    qtypes = _qtypes(path, len(lines), report)
    items = []
    for number, row in enumerate(lines, start=1):
        if not row.strip():
            continue
        question, tab, answer_text = row.partition("\t")
        if not tab:
            report.skip(number, "no tab between the question and its answers")
            continue
        answers = tuple(a.strip() for a in answer_text.split("|") if a.strip())
        topics = tuple(t.strip() for t in _TOPIC.findall(question) if t.strip())
        if not question.strip() or not answers:
            report.skip(number, "empty question or no answer")
            continue
        if not topics:
            report.skip(number, "no [topic entity] in the question")
            continue
        meta = {"hops": str(hops)}
        if qtypes is not None:
            meta["qtype"] = qtypes[number - 1]
        items.append(
            EvalItem(
                id=f"{hops}hop-{split}-{number}",
                question=_TOPIC.sub(r"\1", question).strip(),
                answers=answers,
                topic_entities=topics,
                meta=meta,
            )
        )
    return _finish(f"metaqa-{hops}hop", split, items, report)


def _qtypes(path: Path, count: int, report: LoadReport) -> list[str] | None:
    qtype_path = path.with_name(f"{path.stem}_qtype{path.suffix}")
    if not qtype_path.is_file():
        return None
    qtypes = _read_text(qtype_path).splitlines()
    if len(qtypes) != count:
        report.problems.append(
            f"{qtype_path}: {len(qtypes)} question types for {count} questions; types ignored"
        )
        return None
    return [q.strip() for q in qtypes]


def _json_items(path: Path, text: str, key: str | None) -> Iterator[tuple[int, Any]]:
    """The elements of a JSON array (top level, or under ``key``), each with its line."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise LoadError(str(path), err.lineno, f"not valid JSON: {err.msg}") from err
    array = data.get(key) if key and isinstance(data, dict) else data
    if not isinstance(array, list):
        where = f"a {key!r} list" if key else "a JSON list"
        raise LoadError(str(path), None, f"expected {where} of questions")
    decoder = json.JSONDecoder()
    start = text.find("[", _array_start(text, key))
    position = start + 1
    for element in array:
        while text[position] in " \t\r\n,":
            position += 1
        line = text.count("\n", 0, position) + 1
        _, position = decoder.raw_decode(text, position)
        yield line, element


def _array_start(text: str, key: str | None) -> int:
    if key is None:
        return 0
    match = re.search(r'"' + re.escape(key) + r'"\s*:\s*\[', text)
    return match.start() if match else 0


def load_webquestions(
    path: Path, *, split: str = "test", keep: Callable[[EvalItem], bool] | None = None
) -> Dataset:
    """WebQuestions JSON: ``question``, ``answers`` (names), ``topic_entity`` ``{m.id: name}``.

    ``keep`` filters items, e.g. to questions whose topic entity is in the loaded graph;
    items it drops are counted in ``report.problems`` as one summary line.
    """
    report = LoadReport(str(path))
    items = []
    dropped = 0
    for line, element in _json_items(path, _read_text(path), None):
        if not isinstance(element, dict):
            report.skip(line, "not a JSON object")
            continue
        question = element.get("question")
        answers = element.get("answers")
        topics = element.get("topic_entity") or {}
        if not isinstance(question, str) or not question.strip():
            report.skip(line, "no question text")
            continue
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            report.skip(line, "answers is not a list of names")
            continue
        if not isinstance(topics, dict):
            report.skip(line, "topic_entity is not an object")
            continue
        item = EvalItem(
            id=f"webq-{split}-{line}",
            question=question.strip(),
            answers=tuple(a for a in answers if a.strip()),
            topic_entities=tuple(str(k) for k in topics),
            meta={"topic_names": "|".join(str(v) for v in topics.values())},
        )
        if not item.answers:
            report.skip(line, "no gold answer")
            continue
        if keep is not None and not keep(item):
            dropped += 1
            continue
        items.append(item)
    if dropped:
        report.problems.append(
            f"{path}: {dropped} questions dropped: topic entity not in the graph"
        )
    return _finish("webquestions", split, items, report)


def _choice_item(
    element: Any, line: int, report: LoadReport, prefix: str, name: str
) -> EvalItem | None:
    """One CommonsenseQA / OpenBookQA row: ``question.stem``, ``question.choices``, ``answerKey``."""
    if not isinstance(element, dict) or not isinstance(element.get("question"), dict):
        report.skip(line, "no question object")
        return None
    body = element["question"]
    stem = body.get("stem")
    raw_choices = body.get("choices")
    if not isinstance(stem, str) or not stem.strip():
        report.skip(line, "no question stem")
        return None
    if not isinstance(raw_choices, list) or not raw_choices:
        report.skip(line, "no choices")
        return None
    labels: dict[str, str] = {}
    for choice in raw_choices:
        if not isinstance(choice, dict) or not isinstance(choice.get("text"), str):
            report.skip(line, "a choice without text")
            return None
        labels[str(choice.get("label", ""))] = choice["text"].strip()
    key = labels.get(str(element.get("answerKey", "")))
    if key is None:
        report.skip(line, f"answerKey {element.get('answerKey')!r} names no choice")
        return None
    texts = tuple(labels.values())
    if len(set(texts)) != len(texts):
        report.skip(line, "two choices with the same text")
        return None
    return EvalItem(
        id=f"{prefix}-{element.get('id') or line}",
        question=stem.strip(),
        answers=(key,),
        choices=texts,
        answer_key=key,
        meta={"concept": str(body.get("question_concept", ""))} if name == "commonsenseqa" else {},
    )


def _jsonl_rows(path: Path, report: LoadReport) -> Iterator[tuple[int, Any]]:
    for number, row in enumerate(_read_text(path).splitlines(), start=1):
        if not row.strip():
            continue
        try:
            yield number, json.loads(row)
        except json.JSONDecodeError as err:
            report.skip(number, f"not valid JSON: {err.msg}")


def load_choice_jsonl(path: Path, *, name: str, split: str) -> Dataset:
    """CommonsenseQA or OpenBookQA jsonl (both use the same question/choices shape)."""
    report = LoadReport(str(path))
    prefix = "csqa" if name == "commonsenseqa" else "obqa"
    items = [
        item
        for line, element in _jsonl_rows(path, report)
        if (item := _choice_item(element, line, report, prefix, name)) is not None
    ]
    return _finish(name, split, items, report)


def load_qald(path: Path, *, split: str = "test", language: str = "en") -> Dataset:
    """QALD JSON: the question in ``language``; gold answers are the values of its bindings
    (entity IRIs, literals) or ``yes``/``no`` for ASK questions."""
    report = LoadReport(str(path))
    items = []
    for line, element in _json_items(path, _read_text(path), "questions"):
        if not isinstance(element, dict):
            report.skip(line, "not a JSON object")
            continue
        texts = [
            q.get("string")
            for q in element.get("question") or []
            if isinstance(q, dict) and q.get("language") == language
        ]
        if not texts or not isinstance(texts[0], str) or not texts[0].strip():
            report.skip(line, f"no question in language {language!r}")
            continue
        answers = _qald_answers(element.get("answers"))
        if not answers:
            report.skip(line, "no gold answer")
            continue
        items.append(
            EvalItem(
                id=f"qald-{element.get('id', line)}",
                question=texts[0].strip(),
                answers=answers,
            )
        )
    return _finish("qald-10", split, items, report)


def _qald_answers(blocks: Any) -> tuple[str, ...]:
    values: list[str] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("boolean"), bool):
            values.append("yes" if block["boolean"] else "no")
        for binding in (block.get("results") or {}).get("bindings") or []:
            for value in binding.values() if isinstance(binding, dict) else []:
                if isinstance(value, dict) and isinstance(value.get("value"), str):
                    values.append(value["value"])
    return tuple(dict.fromkeys(values))


def load_jsonl(path: Path, *, split: str = "custom") -> Dataset:
    """Your own questions, one JSON object per line::

        {"question": "...", "answers": ["..."], "choices": ["..."], "topic_entities": ["..."]}

    ``answers`` may be one string; with ``choices``, the first answer must be a choice.
    ``id`` is optional (default: the line number).
    """
    report = LoadReport(str(path))
    items = []
    for number, row in _jsonl_rows(path, report):
        if not isinstance(row, dict):
            report.skip(number, "not a JSON object")
            continue
        question = row.get("question")
        answers = row.get("answers", row.get("answer"))
        if isinstance(answers, str):
            answers = [answers]
        choices = row.get("choices") or []
        topics = row.get("topic_entities") or []
        if not isinstance(question, str) or not question.strip():
            report.skip(number, "no question text")
            continue
        if (
            not isinstance(answers, list)
            or not answers
            or not all(isinstance(a, str) for a in answers)
        ):
            report.skip(number, "answers must be a string or a list of strings")
            continue
        if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
            report.skip(number, "choices must be a list of strings")
            continue
        if choices and answers[0] not in choices:
            report.skip(number, f"the answer {answers[0]!r} is not one of the choices")
            continue
        if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
            report.skip(number, "topic_entities must be a list of strings")
            continue
        items.append(
            EvalItem(
                id=str(row.get("id", f"line-{number}")),
                question=question.strip(),
                answers=tuple(answers),
                choices=tuple(choices),
                answer_key=answers[0] if choices else None,
                topic_entities=tuple(topics),
            )
        )
    return _finish(path.stem, split, items, report)


@dataclass(frozen=True)
class DatasetSpec:
    """Where a known dataset's files lie under the data folder, and how to read them."""

    name: str
    files: dict[str, str]
    description: str

    def path(self, data_dir: Path, split: str) -> Path:
        if split not in self.files:
            raise BadRequest(
                f"{self.name} has no {split!r} split here",
                hint=f"use --split {' or '.join(self.files)}",
            )
        relative = Path(self.files[split])
        # The data folder may be the datasets root or this dataset's own folder.
        for candidate in (data_dir / relative, data_dir / Path(*relative.parts[1:])):
            if candidate.is_file():
                return candidate
        raise BadRequest(
            f"{self.name}: no {relative} under {data_dir}",
            hint="point --data-dir at the folder that holds metaqa/, webquestions/, ...",
        )


def _metaqa_spec(hops: int) -> DatasetSpec:
    return DatasetSpec(
        f"metaqa-{hops}hop",
        {s: f"metaqa/{hops}-hop/qa_{s}.txt" for s in ("dev", "test")},
        f"MetaQA vanilla {hops}-hop questions over the WikiMovies graph",
    )


DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        _metaqa_spec(1),
        _metaqa_spec(2),
        _metaqa_spec(3),
        DatasetSpec(
            "webquestions",
            {"test": "webquestions/WebQuestions.json"},
            "WebQuestions with Freebase topic entities (answer over FB15k-237)",
        ),
        DatasetSpec(
            "commonsenseqa",
            {"dev": "commonsenseqa/dev_rand_split.jsonl"},
            "CommonsenseQA, five choices",
        ),
        DatasetSpec(
            "openbookqa",
            {"dev": "openbookqa/dev.jsonl", "test": "openbookqa/test.jsonl"},
            "OpenBookQA, four choices",
        ),
        DatasetSpec("qald-10", {"test": "qald-10/qald_10.json"}, "QALD-10 over Wikidata"),
    )
}


def load_dataset(
    name: str,
    *,
    split: str,
    data_dir: Path | None,
    keep: Callable[[EvalItem], bool] | None = None,
) -> Dataset:
    """A known dataset by name (files under ``data_dir``), or a ``.jsonl`` file by path."""
    if name.endswith(".jsonl") and name not in DATASETS:
        own = load_jsonl(Path(name))
        return own if keep is None else keep_only(own, keep)
    spec = DATASETS.get(name)
    if spec is None:
        raise BadRequest(
            f"unknown dataset {name!r}",
            hint=f"use one of {', '.join(DATASETS)}, or a path to your own .jsonl file",
        )
    if data_dir is None:
        raise BadRequest(
            f"{name} needs --data-dir", hint="the folder holding metaqa/, webquestions/, ..."
        )
    path = spec.path(data_dir, split)
    if name == "webquestions":
        return load_webquestions(path, split=split, keep=keep)
    if name.startswith("metaqa-"):
        data = load_metaqa(path, hops=int(name[len("metaqa-")]), split=split)
    elif name in ("commonsenseqa", "openbookqa"):
        data = load_choice_jsonl(path, name=name, split=split)
    else:
        data = load_qald(path, split=split)
    return data if keep is None else keep_only(data, keep)


def keep_only(data: Dataset, keep: Callable[[EvalItem], bool]) -> Dataset:
    """The dataset without the items ``keep`` rejects; the report counts them."""
    kept = [item for item in data.items if keep(item)]
    if len(kept) < len(data.items):
        data.report.problems.append(
            f"{data.report.path}: {len(data.items) - len(kept)} questions dropped: "
            "topic entity not in the graph"
        )
    return _finish(data.name, data.split, kept, data.report)


def sample(items: list[EvalItem], *, limit: int | None, seed: int) -> list[EvalItem]:
    """``limit`` items drawn with ``seed`` (all when ``limit`` is None), in file order.

    >>> items = [EvalItem(str(i), f"q{i}") for i in range(10)]
    >>> [i.id for i in sample(items, limit=3, seed=1)] == [i.id for i in sample(items, limit=3, seed=1)]
    True
    >>> len(sample(items, limit=None, seed=0))
    10
    """
    if limit is None or limit >= len(items):
        return list(items)
    chosen = set(random.Random(seed).sample(range(len(items)), limit))
    return [item for i, item in enumerate(items) if i in chosen]

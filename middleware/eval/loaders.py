"""One loader per published question format; each takes a path, downloads nothing,
and returns a :class:`Dataset` whose report names each malformed line as ``file:line``.

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

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from middleware.eval.items import (
    Dataset,
    EvalItem,
    LoadReport,
    finish,
    json_items,
    jsonl_rows,
    read_text,
)

_TOPIC = re.compile(r"\[([^\]]+)\]")


def load_metaqa(path: Path, *, hops: int, split: str = "dev") -> Dataset:
    """MetaQA vanilla ``qa_*.txt``: ``question with [topic]<TAB>answer1|answer2``.

    The brackets are taken off the question (methods see it as a user would write it);
    the bracketed names become ``topic_entities``. The question type comes from
    ``qa_*_qtype.txt`` beside it when present.
    """
    report = LoadReport(str(path))
    lines = read_text(path).splitlines()
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
    return finish(f"metaqa-{hops}hop", split, items, report)


def _qtypes(path: Path, count: int, report: LoadReport) -> list[str] | None:
    qtype_path = path.with_name(f"{path.stem}_qtype{path.suffix}")
    if not qtype_path.is_file():
        return None
    qtypes = read_text(qtype_path).splitlines()
    if len(qtypes) != count:
        report.problems.append(
            f"{qtype_path}: {len(qtypes)} question types for {count} questions; types ignored"
        )
        return None
    return [q.strip() for q in qtypes]


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
    for line, element in json_items(path, read_text(path), None):
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
    return finish("webquestions", split, items, report)


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


def load_choice_jsonl(path: Path, *, name: str, split: str) -> Dataset:
    """CommonsenseQA or OpenBookQA jsonl (both use the same question/choices shape)."""
    report = LoadReport(str(path))
    prefix = "csqa" if name == "commonsenseqa" else "obqa"
    items = [
        item
        for line, element in jsonl_rows(path, report)
        if (item := _choice_item(element, line, report, prefix, name)) is not None
    ]
    return finish(name, split, items, report)


def load_qald(path: Path, *, split: str = "test", language: str = "en") -> Dataset:
    """QALD JSON: the question in ``language``; gold answers are the values of its bindings
    (entity IRIs, literals) or ``yes``/``no`` for ASK questions."""
    report = LoadReport(str(path))
    items = []
    for line, element in json_items(path, read_text(path), "questions"):
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
    return finish("qald-10", split, items, report)


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
    for number, row in jsonl_rows(path, report):
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
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            report.skip(number, "answers must be a string or a list of strings")
            continue
        if not any(a.strip() for a in answers):
            report.skip(number, "no answer: give at least one non-blank answer")
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
        given = row.get("id")
        if given is not None and (isinstance(given, bool) or not isinstance(given, str | int)):
            report.skip(number, "id must be a string or an integer")
            continue
        if isinstance(given, str) and not given.strip():
            report.skip(number, "id is blank: give a name, or leave id out (the line number)")
            continue
        items.append(
            EvalItem(
                id=f"line-{number}" if given is None else str(given),
                question=question.strip(),
                answers=tuple(answers),
                choices=tuple(choices),
                answer_key=answers[0] if choices else None,
                topic_entities=tuple(topics),
                meta={"line": str(number), "where": f"{path}:{number}"},
            )
        )
    return finish(path.stem, split, items, report)

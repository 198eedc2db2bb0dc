"""Question items, the report of how a file was read, and the reading helpers every
loader shares: UTF-8 text, JSON arrays with line numbers, JSON lines.

A malformed line is skipped and counted in the :class:`LoadReport`, never fatal; a
file that cannot be read at all, or holds no usable question, raises ``LoadError``.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "q.json"
>>> _ = path.write_text('[\\n  {"a": 1},\\n  {"a": 2}\\n]')
>>> [(line, row["a"]) for line, row in json_items(path, path.read_text(), None)]
[(2, 1), (3, 2)]
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from middleware.errors import LoadError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalItem:
    """One question with its gold answers.

    ``answers`` are names (or IRIs, for QALD); ``answer_key`` is the text of the
    correct choice for multiple-choice sets; ``topic_entities`` are the dataset's
    own keys for the question's entities (a MetaQA name, a Freebase ``m.`` id). An item
    with neither answers nor key is unanswerable: the right reply is to abstain, and
    ``meta["kind"]`` says why (``eval/unanswerable.py``).
    """

    id: str
    question: str
    answers: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    answer_key: str | None = None
    topic_entities: tuple[str, ...] = ()
    meta: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def answerable(self) -> bool:
        return bool(self.answers) or self.answer_key is not None


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
        log.debug("%s: %s (skipped)", where, why)  # the caller reports ``problems``


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


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")  # a byte order mark is no text
    except FileNotFoundError as err:
        raise LoadError(str(path), None, "no such file", hint="check --data-dir") from err
    except UnicodeDecodeError as err:
        raise LoadError(str(path), None, f"not UTF-8 text: {err.reason}") from err
    except OSError as err:
        raise LoadError(str(path), None, f"cannot read: {err.strerror or err}") from err


def finish(name: str, split: str, items: list[EvalItem], report: LoadReport) -> Dataset:
    items = _first_of_each_id(items, report)
    report.loaded = len(items)
    if not items:
        detail = f"; first problem: {report.problems[0]}" if report.problems else ""
        raise LoadError(report.path, None, f"no usable question in the file{detail}")
    return Dataset(name, split, items, report)


def _first_of_each_id(items: list[EvalItem], report: LoadReport) -> list[EvalItem]:
    """``items`` without a repeated id (the later one is skipped and named): a question
    is known by its id, so a second one would silently take the first one's place."""
    first: dict[str, EvalItem] = {}
    for item in items:
        if item.id not in first:
            first[item.id] = item
            continue
        line = item.meta.get("line")
        earlier = first[item.id].meta.get("line")
        where = f" on line {earlier}" if earlier else ""
        report.skip(int(line) if line else None, f"id {item.id!r} is already used{where}")
    return list(first.values())


def json_items(path: Path, text: str, key: str | None) -> Iterator[tuple[int, Any]]:
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


def jsonl_rows(path: Path, report: LoadReport) -> Iterator[tuple[int, Any]]:
    """Each line's JSON value, with its number; a line that is not UTF-8, not JSON, or
    holds text no file can hold (a lone surrogate escape) is skipped and named."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as err:
        raise LoadError(str(path), None, "no such file") from err
    except OSError as err:
        raise LoadError(str(path), None, f"cannot read: {err.strerror or err}") from err
    data = data.removeprefix(b"\xef\xbb\xbf")
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            row = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            report.skip(number, f"not UTF-8 text: {err.reason} at byte {err.start + 1}")
            continue
        if not row.strip():
            continue
        try:
            value = json.loads(row)
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except json.JSONDecodeError as err:
            report.skip(number, f"not valid JSON: {err.msg}")
            continue
        except UnicodeEncodeError:
            report.skip(number, "holds a lone surrogate escape (such as \\ud800): not text")
            continue
        yield number, value

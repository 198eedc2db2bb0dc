"""Output contracts: the shape of an Answer's JSON and of a results.jsonl record.

The shapes are snapshots in ``tests/data/snapshots/``: keys (recursively) and value
types, not values. A change of shape fails here first; a deliberate one updates the
snapshot and the docs in the same commit (``UPDATE_SNAPSHOTS=1 pytest
tests/test_contracts.py`` rewrites them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from middleware.eval.items import EvalItem
from middleware.eval.runner import Evaluator, ResultsFile, plan
from middleware.eval.scoring import Scorer
from middleware.kg.backends.local import LocalStore
from middleware.llm.ledger import Budget
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.baselines import IO, CoT
from middleware.methods.pseudograph import PseudoGraph
from middleware.methods.qsm import QSM
from middleware.methods.rok import RoK
from middleware.serialize import answer_dict
from middleware.text.embeddings import HashEncoder
from tests.conftest import DATA

SNAPSHOTS = DATA / "snapshots"
FREE_FORM = {"parsed", "meta", "by_step"}  # contents differ per step, method or dataset


def shape(value: Any, key: str = "") -> Any:
    """Keys and value types of a JSON value; a list by the merged shape of its items."""
    if key in FREE_FORM:
        return "any"
    if isinstance(value, dict):
        return {k: shape(v, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        merged: Any = None
        for item in value:
            merged = merge(merged, shape(item))
        return "list" if merged is None else [merged]
    return "null" if value is None else type(value).__name__


def merge(a: Any, b: Any) -> Any:
    """One shape for two: keys united, differing leaf types joined as ``a|b``."""
    if a is None or a == b:
        return b
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: merge(a.get(k), b.get(k)) for k in sorted(set(a) | set(b))}
    if isinstance(a, list) and isinstance(b, list):
        return [merge(a[0], b[0])]
    if "list" in (a, b) and isinstance(a if b == "list" else b, list):
        return a if b == "list" else b
    kinds = set(str(a).split("|")) | set(str(b).split("|"))
    return "|".join(sorted(kinds))


def check_snapshot(name: str, found: Any) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert found == json.loads(path.read_text(encoding="utf-8")), f"shape of {name} changed"


@pytest.fixture(scope="module")
def films() -> LocalStore:
    kg = LocalStore(profile="metaqa", name="films")
    kg.load_text(
        "Titanic|directed_by|James Cameron\nTitanic|starred_actors|Kate Winslet\n"
        "Titanic|release_year|1997\nAvatar|directed_by|James Cameron\n",
        name="kb.txt",
    )
    return kg


def script() -> ScriptedLLM:
    return ScriptedLLM(
        [
            ("Key entities:$", "Titanic; Kate Winslet"),
            ("Useful facts:$", "1"),
            ("Plan:$", "CREATE (t {name: 'Titanic'})-[:DIRECTED_BY]->(c {name: 'James Cameron'})"),
            ("Fixed facts:$", "Titanic | directed by | James Cameron"),
            ("Answer:$", "James Cameron"),
            ("Which is a film", "Titanic"),
        ],
        default="Titanic was directed by James Cameron. So the answer is: James Cameron",
    )


def methods(kg: LocalStore) -> dict[str, Any]:
    llm, encoder = script(), HashEncoder()
    return {
        "rok": RoK(llm, kg),
        "pg": PseudoGraph(llm, kg, encoder=encoder),
        "qsm": QSM(llm, kg, encoder=encoder),
        "io": IO(llm, kg),
        "cot": CoT(llm, kg),
    }


@pytest.mark.parametrize("name", ["rok", "pg", "qsm", "io", "cot"])
def test_answer_json_shape(films: LocalStore, name: str) -> None:
    answer = methods(films)[name].run("Who directed Titanic with Kate Winslet?")
    check_snapshot(f"answer-{name}.json", shape(answer_dict(answer)))


def test_results_record_shape(films: LocalStore, tmp_path: Path) -> None:
    items = [
        EvalItem("q1", "Who directed Titanic?", ("James Cameron",)),
        EvalItem("q2", "Which is a film?", ("Titanic",), ("Titanic", "Paris"), "Titanic"),
    ]
    results = ResultsFile(tmp_path / "results.jsonl")
    Evaluator(methods(films), Scorer(films), results, budget=lambda: Budget(max_calls=6)).run(
        plan([("films", "dev", items)], ["rok", "qsm", "io"])
    )
    failing = Evaluator(
        {"io": IO(ScriptedLLM([]), films)},
        Scorer(films),
        results,
        budget=lambda: Budget(max_calls=0),
    )
    failing.run(plan([("broken", "dev", items[:1])], ["io"]))
    records = [json.loads(line) for line in results.path.read_text().splitlines()]
    scored = [r for r in records if r["error"] is None and not r["choices"]]
    chosen = [r for r in records if r["error"] is None and r["choices"]]
    failed = [r for r in records if r["error"] is not None]
    assert scored and chosen and failed
    check_snapshot(
        "results-record.json",
        {"scored": shape(scored), "choice": shape(chosen), "error": shape(failed)},
    )

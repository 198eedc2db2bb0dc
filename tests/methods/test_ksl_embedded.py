"""Knowledge Solver end to end: ``kgmw ask --method ksl`` over the sample graph with the
real embedded model and encoder, an open question and a multiple-choice one."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from middleware.kg.sample import sample_store
from tests.cli_helpers import run

ENTITY = "https://kgmw.dev/metaqa/entity/"


def _walks(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [s["parsed"] for s in data["steps"] if s["name"] == "walk"]


def _check_walk(data: dict[str, Any]) -> None:
    """The walk comes first in the evidence; every hop of every path is a triple of the
    sample graph, one after the other."""
    graph = sample_store()
    paths = data["evidence"]["paths"]
    assert paths, "the walk is the evidence"
    assert paths[0]["nodes"][0]["value"] == ENTITY + _walks(data)[0]["at"].replace(" ", "%20")
    for path in paths:
        nodes = [n["value"] for n in path["nodes"]]
        for hop, (a, b) in zip(path["hops"], itertools.pairwise(nodes), strict=True):
            t = hop["triple"]
            s, o = t["subject"]["value"], t["object"]["value"]
            assert (s, o) == ((a, b) if hop["forward"] else (b, a))
            ask = f"ASK {{ <{s}> <{t['predicate']['value']}> <{o}> }}"
            assert graph.query(ask).boolean, t  # type: ignore[attr-defined]


@pytest.mark.slow
def test_an_open_question_walks_from_the_question_entity(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys, "ask", "Which films did James Cameron direct?", "--method", "ksl", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["method"] == "ksl" and data["answer"]
    rounds = _walks(data)
    assert rounds and rounds[0]["at"] == "James Cameron"
    assert all(r["picked"] in r["offered"] for r in rounds)
    assert 1 <= data["usage"]["llm_calls"] <= len(rounds) + 1 <= 6
    _check_walk(data)
    assert data["grounded"], "the answer is an entity the walk visited"
    assert all(e["iri"].startswith(ENTITY) for e in data["entities"])


@pytest.mark.slow
def test_a_multiple_choice_question_ends_on_a_choice(capsys: pytest.CaptureFixture[str]) -> None:
    choices = ["Kate Winslet", "James Cameron", "Leonardo DiCaprio", "Billy Zane"]
    args = [a for c in choices for a in ("--choice", c)]
    code, out, err = run(capsys, "ask", "Who directed Titanic?", "--method", "ksl", *args, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["answer"] in choices
    sub = next(s["parsed"] for s in data["steps"] if s["name"] == "subgraph")
    assert sub["sample"]["paths"] > 0
    rounds = _walks(data)
    assert rounds and rounds[0]["at"] == "Titanic"
    assert data["usage"]["llm_calls"] <= len(rounds) + 1
    _check_walk(data)
    assert data["grounded"]

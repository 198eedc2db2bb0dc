"""Answer kinds: a plan whose ends are of the kind the question asks for comes first."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from middleware.config.methods import PlanSettings
from middleware.kg.backends.local import LocalStore
from middleware.planning.planner import Planner
from middleware.planning.plans import Candidate
from middleware.planning.relpaths import path_key
from middleware.text.embeddings import HashEncoder
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

EX = "http://example.org/film/"
DATA = f"""@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:Harry rdfs:label "When Harry Met Sally" ; ex:directedBy ex:Reiner ;
    ex:releaseYear "1989"^^xsd:gYear .
ex:Reiner rdfs:label "Rob Reiner" .
"""
DIRECTED = path_key(((NamedNode(EX + "directedBy"), True),))


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    data = tmp_path / "harry.ttl"
    data.write_text(DATA, encoding="utf-8")
    store = LocalStore(tmp_path / "store", profile="generic")
    store.load([data])
    return store


def planner(store: LocalStore, monkeypatch: pytest.MonkeyPatch, **config: object) -> Planner:
    """A zero-shot planner whose ranking puts the director first, the year second."""
    made = Planner(
        store,
        HashEncoder(),
        linker=EntityLinker(store),
        verbalizer=Verbalizer(store),
        config=PlanSettings(**config),  # type: ignore[arg-type]
    )

    def ranked(spans: list[tuple[str, object]], vectors: object) -> list[Candidate]:
        span, topic = spans[0]
        steps = sorted(store.relation_steps([topic]), key=lambda s: "releaseYear" in s[0].value)
        return [
            Candidate(topic, span, (step,), support)  # type: ignore[arg-type]
            for step, support in zip(steps, (0.7, 0.3), strict=False)
        ]

    monkeypatch.setattr(made, "_rank", ranked)
    return made


def test_a_date_question_puts_the_plan_that_reaches_a_date_first(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    planning = planner(store, monkeypatch).plan("In what year did When Harry Met Sally come out?")
    assert planning.asked == "date"
    best = planning.plans[0]
    assert best.kind == "date" and "releaseYear" in path_key(best.candidate.path)
    assert any("asks for a date" in note for note in planning.notes)
    assert planning.to_dict()["asks_for"] == "date"


def test_a_topic_named_when_does_not_make_the_question_ask_for_a_date(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    planning = planner(store, monkeypatch).plan("Who directed When Harry Met Sally?")
    assert planning.asked == "entity"
    assert path_key(planning.plans[0].candidate.path) == DIRECTED
    assert planning.plans[0].kind == "entity"


def test_answer_types_can_be_turned_off(store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    planning = planner(store, monkeypatch, answer_types=False).plan(
        "In what year did When Harry Met Sally come out?"
    )
    assert planning.asked is None and path_key(planning.plans[0].candidate.path) == DIRECTED

"""Answer kinds: a plan whose ends are of the kind the question asks for comes first."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode

from middleware.config.methods import PlanSettings
from middleware.kg.backends.local import LocalStore
from middleware.planning.answer_types import XSD, asked_kind, ends_kind
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
    ex:releaseYear ex:Y1989 ; ex:releaseDate "1989-07-12"^^xsd:date .
ex:Reiner rdfs:label "Rob Reiner" .
ex:Y1989 rdfs:label "1989" .
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

    def ranked(
        spans: list[tuple[str, object]],
        vectors: object,
        peers: bool,
        unheld: object = None,
        steps: object = None,
    ) -> list[Candidate]:
        span, topic = spans[0]
        order = ("directedBy", "releaseDate", "releaseYear")
        return [
            Candidate(topic, span, ((NamedNode(EX + name), True),), support)  # type: ignore[arg-type]
            for name, support in zip(order, (0.6, 0.3, 0.1), strict=True)
        ]

    monkeypatch.setattr(made, "_rank", ranked)
    return made


def test_a_date_question_puts_the_plan_that_reaches_a_date_first(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    planning = planner(store, monkeypatch).plan("In what year did When Harry Met Sally come out?")
    assert planning.asked == "date"
    best = planning.plans[0]
    # the release date is a literal: a plan reaching only literals answers nothing
    assert best.kind == "date" and "releaseYear" in path_key(best.candidate.path)
    dated = next(p for p in planning.plans if "releaseDate" in path_key(p.candidate.path))
    assert dated.kind == "date" and planning.plans.index(dated) > 0
    assert any("asks for a date" in note for note in planning.notes)
    assert planning.to_dict()["asks_for"] == "date"


def test_a_topic_named_when_does_not_make_the_question_ask_for_a_date(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    planning = planner(store, monkeypatch).plan("Who directed When Harry Met Sally?")
    assert planning.asked == "entity"
    also = planner(store, monkeypatch).plan("Who made When Harry Met Sally when it came out?")
    assert also.asked == "entity"  # the first question word counts
    assert path_key(planning.plans[0].candidate.path) == DIRECTED
    assert planning.plans[0].kind == "entity"


def test_answer_types_can_be_turned_off(store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    planning = planner(store, monkeypatch, answer_types=False).plan(
        "In what year did When Harry Met Sally come out?"
    )
    assert planning.asked is None and path_key(planning.plans[0].candidate.path) == DIRECTED


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("what movies share the year of NE", None),
        ("what year-end lists include NE", None),
        ("NE was released in which year", "date"),
        ("what was the release date of NE", "date"),
        ("how much was the budget of NE", "number"),
        ("who starred in NE when it was released", "entity"),
    ],
)
def test_the_question_words_that_ask_for_a_kind(question: str, kind: str | None) -> None:
    assert asked_kind(question) == kind


def test_numbers_that_are_not_years_read_as_numbers() -> None:
    assert ends_kind(["1000", "1413", "1200"]) == "number"
    assert ends_kind(["1989", "2004"]) == "date"
    typed = [Literal("1200", datatype=NamedNode(XSD + "integer"))]
    assert ends_kind(["1200"], typed) == "number"
    assert (
        ends_kind(["July"], [Literal("1989-07", datatype=NamedNode(XSD + "gYearMonth"))]) == "date"
    )


def test_any_typed_number_is_a_number_and_dates_may_carry_a_zone() -> None:
    unsigned = Literal("1800", datatype=NamedNode(XSD + "nonNegativeInteger"))
    dollars = Literal("1999", datatype=NamedNode("http://dbpedia.org/datatype/usDollar"))
    assert ends_kind(["1800", "1999"], [unsigned, dollars]) == "number"
    assert ends_kind(["1995-12-15T10:00:00+02:00"]) == "date"
    assert ends_kind(["1995"], [Literal("1995")]) == "date"  # a plain string reads by its text


def test_a_zero_shot_plan_put_first_for_its_kind_is_not_called_a_fallback(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from middleware.llm.scripted import ScriptedLLM
    from middleware.methods.plan import Plan as PlanMethod
    from middleware.planning.plans import Plan, Planning

    topic = NamedNode(EX + "Harry")
    voted = Candidate(topic, "When Harry Met Sally", ((NamedNode(EX + "directedBy"), True),), 0.9)
    zero = Candidate(topic, "When Harry Met Sally", ((NamedNode(EX + "releaseYear"), True),), 0.1)
    walks = {c: store.follow(topic, c.path) for c in (voted, zero)}
    planning = Planning(
        "generated",
        plans=[
            Plan(zero, walks[zero], "release year", backup=True, kind="date"),
            Plan(voted, walks[voted], "directed by", kind="entity"),
        ],
        considered=[voted],
        asked="date",
    )
    method = PlanMethod(ScriptedLLM(default="?"), store, encoder=HashEncoder())
    planner, _ = method.planner(store)
    monkeypatch.setattr(planner, "plan", lambda question: planning)
    answer = method.run("In what year did When Harry Met Sally come out?")
    assert not any("reached anything" in w for w in answer.warnings)
    assert answer.basis is not None and not answer.basis.fallback

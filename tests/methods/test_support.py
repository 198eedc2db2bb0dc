"""Grounded means supported: the evidence must join a question entity to the answer.

Each test scripts the model to give an answer the evidence mentions but does not join
to the question's entity, and checks it is withheld as "not in the graph" (kept as the
guess), that a joined answer is given with its support, and that a weak link (a span
inside a longer name) lowers the confidence below the default threshold.
"""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode

from middleware.kg.backends.local import LocalStore
from middleware.kg.base import Triple
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import NOT_FOUND, Evidence, EvidenceTriple, QuestionEntity, Support
from middleware.methods.registry import build_method
from middleware.methods.rok import RoK
from middleware.methods.run import AnswerPolicy
from middleware.methods.support import find_support, support_path
from middleware.serialize.answer_json import answer_dict
from middleware.testing.graphs import films_path
from middleware.testing.llms import first_option_or
from middleware.testing.methods import quick_settings

KB = """\
Heat|directed_by|Michael Mann
Heat|starred_actors|Al Pacino
Black Rain|directed_by|Ridley Scott
Black Rain|starred_actors|Michael Douglas
Nine|directed_by|Rob Marshall
Nine|starred_actors|Nicole Kidman
"""


@pytest.fixture(scope="module")
def kg() -> LocalStore:
    store = LocalStore(profile="metaqa", name="films")
    store.load_text(KB, name="kb.txt")
    return store


def rok_llm(answer: str) -> ScriptedLLM:
    """RoK whose reasoning names Heat and Ridley Scott and keeps every fact."""
    return ScriptedLLM(
        [
            ("Reasoning:$", "Heat was directed by Ridley Scott."),
            ("Key entities:$", "Heat; Ridley Scott"),
            ("Useful facts:$", "1, 2, 3, 4, 5, 6"),
            ("Answer:$", answer),
        ]
    )


def test_an_answer_only_mentioned_in_the_evidence_is_not_in_the_graph(kg: LocalStore) -> None:
    answer = RoK(rok_llm("Ridley Scott"), kg).run("Who directed Heat?")
    facts = [t.text for t in answer.evidence.triples]
    assert "Black Rain | directed by | Ridley Scott" in facts  # mentioned, not joined
    assert answer.answer == NOT_FOUND and not answer.found and not answer.grounded
    assert answer.guess is not None and answer.guess.answer == "Ridley Scott"
    assert "no evidence joins" in answer.guess.why
    data = answer_dict(answer)
    assert data["answer"] is None and data["found"] is False
    assert data["guess"]["answer"] == "Ridley Scott" and data["support"] == []


def test_an_empty_reply_is_not_in_the_graph(kg: LocalStore) -> None:
    """A model that answers nothing has given no answer the graph supports."""
    answer = RoK(rok_llm(""), kg).run("Who directed Heat?")
    assert answer.answer == NOT_FOUND and not answer.found and answer.confidence == 0.0
    assert answer.guess is None  # nothing was guessed
    assert any("empty answer" in w for w in answer.warnings)
    assert answer_dict(answer)["answer"] is None
    lenient = AnswerPolicy(graph_only=False)  # today's behaviour: the empty reply stands
    kept = RoK(rok_llm(""), kg, policy=lenient).run("Who directed Heat?")
    assert kept.answer == "" and kept.found


def test_graph_only_off_gives_the_unsupported_answer_marked_ungrounded(kg: LocalStore) -> None:
    lenient = AnswerPolicy(graph_only=False)
    answer = RoK(rok_llm("Ridley Scott"), kg, policy=lenient).run("Who directed Heat?")
    assert answer.answer == "Ridley Scott" and answer.found and not answer.grounded
    assert answer.guess is None and answer.confidence == 0.2


def test_a_joined_answer_names_its_support(kg: LocalStore) -> None:
    answer = RoK(rok_llm("Michael Mann"), kg).run("Who directed Heat?")
    assert answer.answer == "Michael Mann" and answer.found and answer.grounded
    [chain] = [c for c in answer.support if c.answer.endswith("Michael%20Mann")]
    assert chain.start.endswith("/Heat") and chain.text == "Heat | directed by | Michael Mann"
    assert answer.confidence >= 0.5
    assert answer_dict(answer)["support"][0]["text"] == "Heat | directed by | Michael Mann"


def test_a_span_inside_a_longer_name_is_a_weak_link(kg: LocalStore) -> None:
    settings = quick_settings(plan_zero_shot_choose=False)
    method = build_method("plan", settings, ScriptedLLM(default="Rob Marshall"), kg)
    answer = method.run("Who directed the film Zorblax Nine?")
    assert not answer.found and answer.guess is not None
    assert answer.guess.answer == "Rob Marshall" and answer.guess.confidence < 0.5
    assert any("part of the name 'Zorblax Nine'" in w for w in answer.warnings)
    plan = next(s for s in answer.steps if s.name == "plan")
    assert any("weak link" in note for note in plan.notes)
    # the same question naming the film whole is a strong link, and answered
    strong = method.run("Who directed the film Nine?")
    assert strong.found and strong.answer == "Rob Marshall" and strong.confidence >= 0.5
    assert strong.support and strong.support[0].weak is None


def test_a_plan_that_reaches_only_values_keeps_them_as_the_guess() -> None:
    """A year held as a literal is not an entity a walk supports (yet): the plan's
    values are the guess, and a warning says why, not a silent empty answer."""
    films = LocalStore(profile="generic", name="films")
    films.load([films_path()])
    method = build_method("plan", quick_settings(), first_option_or("1997"), films)
    answer = method.run("What is the release year of Titanic?")
    assert not answer.found and answer.guess is not None
    assert answer.guess.answer == "1997"
    assert any("literal" in w and "1997" in w for w in answer.warnings)
    lenient = build_method(
        "plan", quick_settings(answer_graph_only=False), first_option_or("x"), films
    )
    given = lenient.run("What is the release year of Titanic?")
    assert given.answer == "1997" and not given.grounded


def test_plan_support_is_the_walk_from_the_topic(kg: LocalStore) -> None:
    settings = quick_settings(plan_zero_shot_choose=False)
    answer = build_method("plan", settings, ScriptedLLM(default="x"), kg).run("Who directed Heat?")
    assert answer.answer == "Michael Mann" and answer.grounded
    [chain] = answer.support
    assert chain.start.endswith("/Heat") and len(chain.triples) == 1
    assert "Michael Mann" in chain.text


def test_a_chain_reads_as_a_walk_from_the_question_entity() -> None:
    """A chain's triples, read in either direction, become a path that starts at the
    question's entity and ends at the answer's (what the front ends verbalize)."""
    e = "https://kgmw.dev/metaqa/entity/"
    r = "https://kgmw.dev/metaqa/relation/"
    starred = Triple(NamedNode(e + "Heat"), NamedNode(r + "starred_actors"), NamedNode(e + "Al"))
    directed = Triple(NamedNode(e + "Heat"), NamedNode(r + "directed_by"), NamedNode(e + "Mann"))
    chain = Support(e + "Al", e + "Mann", (starred, directed), "Al ; Heat ; Mann")
    path = support_path(chain)
    assert [hop.forward for hop in path.hops] == [False, True]
    assert [n.value for n in path.nodes] == [e + "Al", e + "Heat", e + "Mann"]


def _facts(*rows: tuple[str, str, str]) -> Evidence:
    E, R = "https://kgmw.dev/metaqa/entity/", "https://kgmw.dev/metaqa/relation/"
    triples = []
    for s, p, o in rows:
        obj = Literal(o) if o.isdigit() else NamedNode(E + o)
        triple = Triple(NamedNode(E + s), NamedNode(R + p), obj, "films")
        triples.append(EvidenceTriple(triple, f"{s} | {p} | {o}"))
    return Evidence(triples=triples)


def _asked(*names: str) -> dict[str, QuestionEntity]:
    E = "https://kgmw.dev/metaqa/entity/"
    return {E + n: QuestionEntity(E + n, n, n, "exact", "films") for n in names}


def test_a_detour_through_a_shared_genre_is_too_long_to_support() -> None:
    evidence = _facts(
        ("Heat", "has_genre", "Crime"),
        ("Hannibal", "has_genre", "Crime"),
        ("Hannibal", "directed_by", "Ridley_Scott"),
    )
    scott = "https://kgmw.dev/metaqa/entity/Ridley_Scott"
    assert find_support(evidence, _asked("Heat"), [scott], rule="facts", max_hops=2) == []


def test_a_literal_joins_nothing() -> None:
    evidence = _facts(
        ("Heat", "release_year", "1995"),
        ("Casino", "release_year", "1995"),
        ("Casino", "directed_by", "Scorsese"),
    )
    scorsese = "https://kgmw.dev/metaqa/entity/Scorsese"
    assert find_support(evidence, _asked("Heat"), [scorsese], rule="facts", max_hops=3) == []

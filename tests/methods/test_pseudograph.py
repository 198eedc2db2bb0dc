"""The pseudo-graph method with a scripted LLM and the hash encoder: calls, matching, order."""

from __future__ import annotations

import re

import numpy as np
import pytest

from middleware.config import QSMSettings
from middleware.errors import BudgetExceeded
from middleware.kg.backends.local import LocalStore
from middleware.llm.ledger import Budget
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.pseudograph import PseudoGraph, PseudoGraphConfig, parse_fact_lines
from middleware.methods.qsm import QSM
from middleware.text.embeddings import HashEncoder

FACTS = """Heat|directed_by|Michael Mann
Heat|starred_actors|Al Pacino
Heat|starred_actors|Robert De Niro
Heat|starred_actors|Val Kilmer
Heat|release_year|1995
Heat|has_genre|Crime
Heat|written_by|Michael Mann
Heat|has_tags|heist
Heat|has_tags|bank robbery
Heat|has_tags|los angeles
Heat|has_tags|michael mann
Heat|has_tags|al pacino
Heat|in_language|English
Collateral|directed_by|Michael Mann
Collateral|starred_actors|Tom Cruise
Collateral|release_year|2004
"""
DRAFT = """need the director of Heat and his other films
Cypher:
CREATE (h:Film {name: 'Heat', year: 1995})-[:DIRECTED_BY]->(m:Person {name: 'Michael Mann'})
CREATE (c:Film {name: 'Collateral'})-[:DIRECTED_BY]->(m)
"""


@pytest.fixture(scope="module")
def films() -> LocalStore:
    store = LocalStore(profile="metaqa", name="films")
    store.load_text(FACTS, name="kb.txt")
    return store


def script(draft: str = DRAFT, fixed: str = "Heat | directed by | Michael Mann") -> ScriptedLLM:
    return ScriptedLLM(
        [("Plan:$", draft), ("Fixed facts:$", fixed), ("Answer:$", "It is {Michael Mann}.")]
    )


def method(llm: ScriptedLLM, graph: LocalStore, **config: float | bool) -> PseudoGraph:
    settings = {"threshold": 0.3, **config}
    return PseudoGraph(llm, graph, encoder=HashEncoder(), config=PseudoGraphConfig(**settings))  # type: ignore[arg-type]


def test_exactly_three_llm_calls_draft_verify_answer(films: LocalStore) -> None:
    llm = script()
    answer = method(llm, films).run("Who directed Heat?")
    assert answer.answer == "Michael Mann"
    assert answer.usage["llm_calls"] == 3 and len(llm.calls) == 3
    assert [s.name for s in answer.steps if s.llm_calls] == ["draft", "verify", "answer"]
    names = [s.name for s in answer.steps]
    assert names == [
        "draft",
        "link",
        "base_graph",
        "encode",
        "match",
        "prune",
        "verify",
        "answer",
        "ground",
    ]
    assert answer.grounding == "neighbourhood"
    assert [e.text for e in answer.evidence.triples] == ["Heat | directed by | Michael Mann"]
    assert answer.evidence.triples[0].role == "verified"
    assert [e.label for e in answer.entities] == ["Michael Mann"]


def test_each_pseudo_triple_keeps_its_ten_best_base_triples(films: LocalStore) -> None:
    draft = (
        "Cypher:\nCREATE (h:Film {name: 'Heat'})-[:DIRECTED_BY]->(m:Person {name: 'Nobody Here'})"
    )
    answer = method(script(draft=draft), films, threshold=0.0, question_query=False).run(
        "Who directed Heat?"
    )
    match = next(s for s in answer.steps if s.name == "match")
    assert match.parsed == {"films": 10}
    base = next(s for s in answer.steps if s.name == "base_graph").parsed
    assert base == {"films": 13}  # Heat's neighbourhood: more than ten triples
    # the same ten, in the same order, as cosine over every base triple computed here
    encoder = HashEncoder()
    texts = [t for t in _heat_texts(films)]
    scores = encoder.encode(texts) @ encoder.encode(["Heat | directed by | Nobody Here"])[0]
    expected = [texts[i] for i in np.argsort(-scores, kind="stable")[:10]]
    prune = next(s for s in answer.steps if s.name == "prune").parsed
    kept = prune["sources"]["films"]["kept"][0]["triples"]
    assert [t["text"] for t in kept] == expected


def _heat_texts(graph: LocalStore) -> list[str]:
    from middleware.methods.collect import neighbourhood
    from middleware.text.linking import EntityLinker

    heat = EntityLinker(graph).best("Heat")
    assert heat is not None
    return [b.text for b in neighbourhood(graph, [heat.iri], per_entity=100)]


def test_verification_prompt_lists_the_ground_graph_best_entity_first(films: LocalStore) -> None:
    answer = method(script(), films).run("Who directed Heat?")
    prune = next(s for s in answer.steps if s.name == "prune").parsed
    kept = prune["sources"]["films"]["kept"]
    assert prune["k"] == 2  # Heat and Collateral are the draft's subjects
    scores = [g["score"] for g in kept]
    assert scores == sorted(scores, reverse=True) and len(kept) == 2
    prompt = next(s for s in answer.steps if s.name == "verify").prompt or ""
    block = prompt.rsplit("Trusted facts:", 1)[1].split("Draft:", 1)[0]
    lines = [line for line in block.splitlines() if line and not line.startswith("<")]
    expected: list[str] = []
    for number, group in enumerate(kept, start=1):
        expected.append(f"[{number}] {group['entity']} (films)")
        expected += [t["text"] for t in group["triples"]]
    assert lines == expected
    for group in kept:
        triple_scores = [t["score"] for t in group["triples"]]
        assert triple_scores == sorted(triple_scores, reverse=True)
    draft = prompt.rsplit("Draft:", 1)[1]
    assert "Heat | directed by | Michael Mann" in draft and "Heat | year | 1995" in draft


def test_threshold_can_empty_the_ground_graph_as_published(films: LocalStore) -> None:
    llm = script()
    answer = method(llm, films, threshold=0.999, min_ground=0).run("Who directed Heat?")
    assert answer.grounding == "none" and not answer.found
    # nothing to verify against: no verification call; no evidence: no answer call either
    assert answer.usage["llm_calls"] == 1
    assert any("similarity threshold" in w for w in answer.warnings)
    assert not answer.evidence.triples


def test_below_the_threshold_the_best_entities_are_still_verified(films: LocalStore) -> None:
    llm = script()
    answer = method(llm, films, threshold=0.999, min_ground=2).run("Who directed Heat?")
    prune = next(s for s in answer.steps if s.name == "prune").parsed
    assert prune["threshold_fallback"] is True and 1 <= len(prune["ground_graph"]) <= 2
    assert answer.usage["llm_calls"] == 3  # the verification call runs
    assert any("pg_min_ground" in w for w in answer.warnings)
    assert answer.evidence.triples and answer.grounding == "neighbourhood"


def test_a_draft_without_cypher_matches_the_question(films: LocalStore) -> None:
    answer = method(script(draft="I am not sure."), films, threshold=0.0).run("Who directed Heat?")
    assert any("the question itself is matched" in w for w in answer.warnings)
    assert next(s for s in answer.steps if s.name == "prune").parsed["k"] == 1
    assert answer.answer == "Michael Mann"


def test_an_unreadable_verification_falls_back_to_the_ground_graph(films: LocalStore) -> None:
    answer = method(script(fixed="no idea"), films).run("Who directed Heat?")
    assert any("held no fact" in w for w in answer.warnings)
    assert answer.evidence.triples and answer.grounding == "neighbourhood"


def test_choices_are_answered_with_a_constrained_choice(films: LocalStore) -> None:
    llm = ScriptedLLM(
        [("Plan:$", DRAFT), ("Fixed facts:$", "Heat | directed by | Michael Mann")],
        default="Michael Mann",
    )
    answer = method(llm, films).run("Who directed Heat?", choices=["Al Pacino", "Michael Mann"])
    assert answer.answer == "Michael Mann" and answer.usage["llm_calls"] == 3


def test_the_budget_stops_the_run(films: LocalStore) -> None:
    with pytest.raises(BudgetExceeded):
        method(script(), films).run("Who directed Heat?", budget=Budget(max_calls=2))


def test_fact_lines_in_either_notation() -> None:
    text = "Fixed:\n- A | r | B\n<C> <has part> <D>\nE | r1 | r2 | F\nnot a fact"
    assert parse_fact_lines(text) == [
        ("A", "r", "B"),
        ("C", "has part", "D"),
        ("E", "r1 | r2", "F"),
    ]


def test_qsm_gives_the_question_its_nearest_triples(films: LocalStore) -> None:
    llm = ScriptedLLM([("Answer:$", "Michael Mann")])
    answer = QSM(llm, films, encoder=HashEncoder(), config=QSMSettings(top_k=3)).run(
        "Who directed Heat?"
    )
    assert answer.usage["llm_calls"] == 1
    assert len(answer.evidence.triples) == 3
    assert "Heat | directed by | Michael Mann" in [t.text for t in answer.evidence.triples]
    assert re.search(r"Heat \| directed by \| Michael Mann", llm.calls[0].prompt)
    assert [e.label for e in answer.entities] == ["Michael Mann"]

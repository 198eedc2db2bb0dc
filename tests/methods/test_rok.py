"""RoK end to end with a scripted LLM: calls, steps, degradation, evidence, budget."""

from __future__ import annotations

import re

import pytest

from middleware.errors import BadRequest, BudgetExceeded, ConfigError
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.llm.ledger import Budget
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import NOT_FOUND
from middleware.methods.rok import RoK, RoKConfig, order_key_entities, parse_entity_list
from middleware.methods.run import AnswerPolicy
from middleware.text.linking import EntityLinker

KB = """\
Titanic|directed_by|James Cameron
Titanic|starred_actors|Kate Winslet
Titanic|starred_actors|Leonardo DiCaprio
Titanic|release_year|1997
Avatar|directed_by|James Cameron
Avatar|starred_actors|Zoe Saldana
Revolutionary Road|starred_actors|Kate Winslet
Revolutionary Road|starred_actors|Leonardo DiCaprio
Revolutionary Road|directed_by|Sam Mendes
Inception|starred_actors|Leonardo DiCaprio
Inception|directed_by|Christopher Nolan
Lonely Film|has_genre|Drama
"""

EXPAND = "Reasoning:$"
EXTRACT = "Key entities:$"
FILTER = "Useful facts:$"
ANSWER = "Answer:$"


@pytest.fixture(scope="module")
def kg() -> LocalStore:
    store = LocalStore(profile="metaqa", name="films")
    store.load_text(KB, name="kb.txt")
    return store


def scripted(entities: str, *, keep: str = "1", answer: str = "James Cameron") -> ScriptedLLM:
    return ScriptedLLM(
        [
            (
                EXPAND,
                "Titanic starred Kate Winslet; James Cameron directed it. Likely answer: James Cameron.",
            ),
            (EXTRACT, entities),
            (FILTER, keep),
            (ANSWER, answer),
            ("Choice:$", answer),
        ]
    )


def kinds(llm: ScriptedLLM) -> list[str]:
    names = []
    for call in llm.calls:
        tail = call.prompt.rstrip()
        names.append(
            next(
                n
                for n, p in (
                    ("expand", EXPAND),
                    ("extract", EXTRACT),
                    ("filter", FILTER),
                    ("answer", ANSWER),
                )
                if re.search(p, tail)
            )
        )
    return names


def test_full_run_makes_four_calls_with_one_filter(kg: LocalStore) -> None:
    llm = scripted("Titanic; Kate Winslet; James Cameron")
    answer = RoK(llm, kg).run("Who directed the Kate Winslet film Titanic?")
    assert kinds(llm) == ["expand", "extract", "filter", "answer"]
    assert answer.usage["llm_calls"] == 4
    assert [s.name for s in answer.steps] == [
        "expand",
        "extract",
        "link",
        "main_paths",
        "rank",
        "neighbours",
        "filter",
        "answer",
        "ground",
    ]
    assert answer.grounding == "paths" and answer.grounded and answer.warnings == []
    assert answer.answer == "James Cameron"
    assert [e.label for e in answer.entities] == ["James Cameron"]
    assert answer.entities[0].iri == kg.entity_iri("James Cameron")
    assert answer.entities[0].source == "films"
    assert {p.text for p in answer.evidence.paths} >= {
        "Titanic | starring | Kate Winslet",
        "Titanic | directed by | James Cameron",
    }
    by_step = answer.usage["by_step"]
    assert by_step["filter"]["llm_calls"] == 1 and by_step["main_paths"]["sparql_queries"] > 0
    assert answer.usage["sparql_queries"] == sum(s.sparql_queries for s in answer.steps)


def test_filter_sees_whole_triples_and_one_kept_fact_becomes_evidence(kg: LocalStore) -> None:
    llm = scripted("Titanic; Kate Winslet", keep="none")
    RoK(llm, kg).run("What year is the Kate Winslet film Titanic from?")
    prompt = llm.calls[2].prompt
    facts = re.findall(
        r"^(\d+)\. (.+)$", prompt.split("Useful facts:")[-2].split("<graph>")[-1], re.M
    )
    assert ("1", "Titanic | directed by | James Cameron") in facts or any(
        "|" in text and text.count("|") == 2 for _, text in facts
    )
    assert all(text.count("|") == 2 for _, text in facts)

    llm = scripted("Titanic; Kate Winslet", keep="2")
    answer = RoK(llm, kg).run("What year is the Kate Winslet film Titanic from?")
    shown = re.findall(r"^\d+\. (.+)$", llm.calls[2].prompt.split("<graph>")[-1], re.M)
    assert [t.text for t in answer.evidence.triples] == [shown[1]]
    assert answer.evidence.triples[0].role == "neighbour"


def test_only_main_path_relations_are_removed_from_neighbours(kg: LocalStore) -> None:
    llm = scripted("Titanic; Kate Winslet")
    answer = RoK(llm, kg, config=RoKConfig(top_k=1)).run("Which film with Kate Winslet is Titanic?")
    step = next(s for s in answer.steps if s.name == "neighbours")
    # Main path Titanic -starring-> Kate Winslet: Titanic's other starring triple
    # (DiCaprio) and Kate Winslet's other starred-in triple (Revolutionary Road) go.
    assert step.parsed["same_relation_dropped"] == 2
    shown = llm.calls[2].prompt.split("<graph>")[-1]
    assert "Leonardo DiCaprio" not in shown and "Revolutionary Road" not in shown
    assert "Titanic | directed by | James Cameron" in shown


def test_pairs_and_rank_are_recorded(kg: LocalStore) -> None:
    llm = scripted("Kate Winslet; Leonardo DiCaprio; James Cameron")
    answer = RoK(llm, kg).run("Which film has Kate Winslet, Leonardo DiCaprio and James Cameron?")
    pairs = next(s for s in answer.steps if s.name == "main_paths").parsed["pairs"]
    winslet, dicaprio, cameron = (
        kg.entity_iri(n) for n in ("Kate Winslet", "Leonardo DiCaprio", "James Cameron")
    )
    assert [(p["a"], p["b"]) for p in pairs] == [
        (winslet, dicaprio),
        (winslet, cameron),
        (dicaprio, cameron),
    ]
    ranked = next(s for s in answer.steps if s.name == "rank").parsed
    assert list(ranked["buckets"]) == sorted(ranked["buckets"], reverse=True)
    # Four distinct paths, all holding two key entities, fewer than top_k = 5: all kept,
    # best mean PageRank first (the paths through Titanic, the hub, lead).
    assert ranked["buckets"] == {"2": 4}
    scores = [p["score"] for p in ranked["selected"]]
    assert len(scores) == 4 and scores == sorted(scores, reverse=True)
    assert "Titanic" in ranked["selected"][0]["text"]
    assert [p.text for p in answer.evidence.paths] == [p["text"] for p in ranked["selected"]]


def test_question_mentions_rank_first() -> None:
    store = LocalStore(profile="metaqa")
    store.load_text(KB, name="kb.txt")
    keys, unlinked = order_key_entities(
        "Did Kate Winslet act in Titanic?",
        ["James Cameron", "Titanic", "Nobody Known"],
        EntityLinker(store),
        limit=5,
    )
    assert [(k.entity.label, k.origin) for k in keys] == [
        ("Titanic", "question"),
        ("Kate Winslet", "question-span"),
        ("James Cameron", "reasoning"),
    ]
    assert unlinked == ["Nobody Known"]
    capped, _ = order_key_entities(
        "Did Kate Winslet act in Titanic?", ["James Cameron"], EntityLinker(store), limit=1
    )
    assert [k.entity.label for k in capped] == ["Kate Winslet"]


def test_one_linked_entity_falls_back_to_its_neighbourhood(kg: LocalStore) -> None:
    llm = scripted("Avatar", keep="1, 2", answer="James Cameron")
    answer = RoK(llm, kg).run("Who directed Avatar?")
    assert answer.grounding == "neighbourhood"
    assert any("only one key entity" in w for w in answer.warnings)
    assert "main_paths" not in [s.name for s in answer.steps]
    assert kinds(llm) == ["expand", "extract", "filter", "answer"]
    assert answer.evidence.paths == [] and len(answer.evidence.triples) == 2


def test_unconnected_key_entities_fall_back_with_a_warning(kg: LocalStore) -> None:
    llm = scripted("Lonely Film; Avatar", keep="1")
    answer = RoK(llm, kg).run("Is Lonely Film like Avatar?")
    assert answer.grounding == "neighbourhood"
    assert any("no path of at most 2 hops" in w for w in answer.warnings)


def test_nothing_linked_gives_an_ungrounded_answer_in_three_calls(kg: LocalStore) -> None:
    llm = scripted("Atlantis; Poseidon", answer="Poseidon")
    answer = RoK(llm, kg).run("Who rules atlantis?")  # graph only: no evidence, no answer call
    assert kinds(llm) == ["expand", "extract"] and answer.answer == NOT_FOUND
    llm = scripted("Atlantis; Poseidon", answer="Poseidon")
    answer = RoK(llm, kg, policy=AnswerPolicy(graph_only=False)).run("Who rules atlantis?")
    assert kinds(llm) == ["expand", "extract", "answer"] and answer.answer == "Poseidon"
    assert answer.grounding == "none" and not answer.grounded
    assert any("no key entity linked" in w for w in answer.warnings)
    assert "(nothing found)" in llm.calls[-1].prompt
    assert answer.entities == []


def test_unreadable_filter_reply_keeps_all_and_says_so(kg: LocalStore) -> None:
    llm = scripted("Avatar", keep="I think the first ones")
    answer = RoK(llm, kg).run("Who directed Avatar?")
    step = next(s for s in answer.steps if s.name == "filter")
    assert "named no fact numbers" in step.notes[0]
    assert len(answer.evidence.triples) == len(step.parsed) > 0


def test_budget_stops_before_the_third_call(kg: LocalStore) -> None:
    llm = scripted("Titanic; Kate Winslet")
    with pytest.raises(BudgetExceeded, match="LLM call 3"):
        RoK(llm, kg).run("Who directed Titanic?", budget=Budget(max_calls=2))
    assert len(llm.calls) == 2


def test_choices_are_picked_with_the_evidence(kg: LocalStore) -> None:
    llm = scripted("Titanic; Kate Winslet")
    answer = RoK(llm, kg).run("Who directed Titanic?", choices=["Sam Mendes", "James Cameron"])
    assert answer.answer == "James Cameron"
    assert llm.calls[-1].kind == "choose" and llm.calls[-1].options == [
        "Sam Mendes",
        "James Cameron",
    ]
    assert "Titanic | starring | Kate Winslet" in llm.calls[-1].prompt
    assert answer.usage["llm_calls"] == 4


def test_bad_input_is_refused_before_any_call(kg: LocalStore) -> None:
    llm = scripted("Titanic")
    with pytest.raises(BadRequest, match="empty"):
        RoK(llm, kg).run("   ")
    with pytest.raises(BadRequest, match="characters"):
        RoK(llm, kg).run("why " * 1000)
    with pytest.raises(BadRequest, match="differ"):
        RoK(llm, kg).run("Who?", choices=["a", "a"])
    with pytest.raises(BadRequest, match="one graph"):
        RoK(llm, kg).run("Who?", sources=[kg, kg])
    with pytest.raises(ConfigError, match="rok_damping"):
        RoKConfig(damping=1.5)
    assert llm.calls == []


def test_entity_list_parsing() -> None:
    assert parse_entity_list("- Titanic\n- Kate Winslet") == ["Titanic", "Kate Winslet"]
    assert parse_entity_list("Paris, France; Berlin (Germany, Europe)") == [
        "Paris",
        "France",
        "Berlin (Germany, Europe)",
    ]
    assert parse_entity_list("") == []


def test_rok_over_a_real_sparql_endpoint(oxigraph_server: str) -> None:
    graph = SparqlEndpoint(oxigraph_server, name="films-endpoint")
    llm = ScriptedLLM(
        [
            (EXPAND, "Titanic and Revolutionary Road both star Kate Winslet."),
            (EXTRACT, "Titanic; Revolutionary Road; Kate Winslet"),
            (FILTER, "1"),
            (ANSWER, "Kate Winslet"),
        ]
    )
    answer = RoK(llm, graph).run("Who starred in both Titanic and Revolutionary Road?")
    assert answer.grounding == "paths"
    assert "Titanic | starring | Kate Winslet | starred in | Revolutionary Road" in {
        p.text for p in answer.evidence.paths
    } or any("Kate Winslet" in p.text for p in answer.evidence.paths)
    assert answer.entities[0].iri == "http://example.org/film/Winslet"
    assert answer.usage["sparql_queries"] > 0 and answer.usage["llm_calls"] == 4
    for triple in answer.evidence.all_triples():
        assert triple.source == "films-endpoint"
        assert graph.query(f"ASK {{ {triple.subject} {triple.predicate} {triple.object} }}").boolean


def test_a_name_the_model_repeats_in_a_row_is_answered_once(kg: LocalStore) -> None:
    llm = scripted("Titanic; James Cameron", answer="Titanic, Titanic, titanic , Avatar")
    answer = RoK(llm, kg).run("Which films did James Cameron direct?")
    assert answer.answer == "Titanic, Avatar"
    assert [e.label for e in answer.entities] == ["Titanic", "Avatar"]

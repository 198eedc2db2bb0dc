"""Self-consistency (sc): k seeded CoT samples, a majority vote, choices, budget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from middleware.config import SCSettings
from middleware.errors import BudgetExceeded
from middleware.kg.backends.local import LocalStore
from middleware.llm import Budget, CachedLLM, ResponseCache
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import NOT_FOUND
from middleware.methods.registry import build_method
from middleware.methods.sc import SelfConsistency, majority, match_choice, vote_key
from middleware.testing.methods import quick_settings

CHOICES = ["Al Pacino", "Tom Hanks"]


@pytest.fixture(scope="module")
def kg() -> LocalStore:
    store = LocalStore(profile="metaqa", name="films")
    store.load_text("Heat|directed_by|Michael Mann\nHeat|starred_actors|Al Pacino\n", name="kb.txt")
    return store


def replies(*answers: str) -> Callable[[str], str]:
    """Chains of thought ending in ``answers``, one per call, in order."""
    queue = iter(answers)
    return lambda prompt: f"Heat is a 1995 crime film. So the answer is: {next(queue)}"


def sampler(*answers: str, **rules: str) -> ScriptedLLM:
    return ScriptedLLM([("Reasoning:$", replies(*answers)), *rules.items()])


def test_majority_vote_over_normalized_answers(kg: LocalStore) -> None:
    llm = sampler(
        "Al Pacino", "Michael Mann", "michael mann.", "the Michael Mann", "Robert De Niro"
    )
    answer = SelfConsistency(llm, kg).run("Who directed Heat?")
    assert answer.answer == "Michael Mann" and answer.method == "sc"
    assert [s.name for s in answer.steps] == ["sample"] * 5 + ["vote", "ground"]
    assert answer.usage.llm_calls == 5 == answer.usage.by_step["sample"].llm_calls
    assert "vote" not in answer.usage.by_step or answer.usage.by_step["vote"].llm_calls == 0
    vote = answer.steps[5].parsed
    assert vote["answers"] == [
        "Al Pacino",
        "Michael Mann",
        "michael mann",
        "the Michael Mann",
        "Robert De Niro",
    ]
    assert vote["votes"] == {"Michael Mann": 3, "Al Pacino": 1, "Robert De Niro": 1}
    assert (vote["answer"], vote["share"]) == ("Michael Mann", 0.6)
    assert answer.steps[0].parsed["reasoning"].startswith("Heat is a 1995 crime film.")
    assert answer.grounding == "not-applicable" and not answer.evidence and not answer.grounded
    assert [e.iri for e in answer.entities] == [kg.entity_iri("Michael Mann")]
    assert answer.warnings == []


def test_each_sample_gets_the_temperature_and_its_own_seed() -> None:
    llm = sampler("Paris", "Paris", "Paris")
    config = SCSettings(samples=3, temperature=0.9, seed=10)
    answer = SelfConsistency(llm, config=config).run("Capital of France?")
    assert [(c.temperature, c.seed) for c in llm.calls] == [(0.9, 10), (0.9, 11), (0.9, 12)]
    assert [(s.parsed["sample"], s.parsed["seed"]) for s in answer.steps[:3]] == [
        (1, 10),
        (2, 11),
        (3, 12),
    ]
    # the registered method reads its table from the settings
    llm = sampler("Paris", "Paris")
    settings = quick_settings(sc_samples=2, sc_temperature=1.2, sc_seed=5)
    build_method("sc", settings, llm, None).run("Capital of France?")
    assert [(c.temperature, c.seed) for c in llm.calls] == [(1.2, 5), (1.2, 6)]


def test_ties_go_to_the_earliest_sample_and_empty_answers_do_not_vote() -> None:
    llm = sampler("Lyon", "Paris", "Paris", "Lyon")
    answer = SelfConsistency(llm, config=SCSettings(samples=4)).run("A city?")
    assert answer.answer == "Lyon" and answer.steps[4].parsed["votes"] == {"Lyon": 2, "Paris": 2}
    queue = iter(["", "  ", "So the answer is: Nice"])
    llm = ScriptedLLM(default=lambda prompt: next(queue))
    answer = SelfConsistency(llm, config=SCSettings(samples=3)).run("A city?")
    assert answer.answer == "Nice" and answer.steps[3].parsed["votes"] == {"Nice": 1}
    llm = ScriptedLLM(default="")
    answer = SelfConsistency(llm, config=SCSettings(samples=2)).run("A city?")
    assert answer.answer == "" and answer.confidence == 0.0
    assert any("empty answer in every sample" in w for w in answer.warnings)


def test_samples_without_the_marker_use_their_last_sentence_and_warn_once() -> None:
    llm = ScriptedLLM(default="Heat is a crime film. Michael Mann directed it.")
    answer = SelfConsistency(llm, config=SCSettings(samples=3)).run("Who directed Heat?")
    assert answer.answer == "Michael Mann directed it"
    assert len(answer.warnings) == 1 and "samples 1, 2, 3" in answer.warnings[0]
    assert all(step.notes for step in answer.steps[:3])


def test_with_choices_the_vote_is_among_choices(kg: LocalStore) -> None:
    llm = sampler("tom hanks", "Al Pacino", "someone", "Al Pacino.", "Robert De Niro")
    answer = SelfConsistency(llm, kg).run("Who starred in Heat?", choices=CHOICES)
    assert answer.answer == "Al Pacino" and len(llm.calls) == 5  # no extra call
    assert [s.parsed["choice"] for s in answer.steps[:5]] == [
        "Tom Hanks",
        "Al Pacino",
        None,
        "Al Pacino",
        None,
    ]
    assert answer.steps[5].parsed["votes"] == {"Al Pacino": 2, "Tom Hanks": 1}
    assert [e.iri for e in answer.entities] == [kg.entity_iri("Al Pacino")]
    # a tie among choices goes to the choice the earliest sample named
    llm = sampler("Tom Hanks", "Al Pacino")
    method = SelfConsistency(llm, config=SCSettings(samples=2))
    assert method.run("Who starred in Big?", choices=CHOICES).answer == "Tom Hanks"


def test_when_no_sample_names_a_choice_one_constrained_call_picks() -> None:
    llm = sampler("someone", "nobody", **{"Choice:$": "Tom Hanks"})
    answer = SelfConsistency(llm, config=SCSettings(samples=2)).run(
        "Who starred in Big?", choices=CHOICES
    )
    assert answer.answer == "Tom Hanks" and [c.kind for c in llm.calls] == [
        "complete",
        "complete",
        "choose",
    ]
    assert "So the answer is: someone" in llm.calls[-1].prompt  # the reasonings are its facts
    assert (llm.calls[-1].temperature, llm.calls[-1].seed) == (0.0, None)
    assert [s.name for s in answer.steps] == ["sample", "sample", "vote", "answer"]
    assert answer.steps[2].parsed["votes"] == {} and answer.steps[2].notes


def test_graph_only_does_not_apply_to_a_baseline(kg: LocalStore) -> None:
    llm = sampler(*["Michael Mann"] * 5)
    settings = quick_settings(answer_graph_only=True, sc_samples=3)
    method = build_method("sc", settings, llm, kg)
    answer = method.run("Who directed Heat?")
    assert answer.answer == "Michael Mann" and answer.found and not answer.grounded
    assert answer.answer != NOT_FOUND and llm.calls


def test_a_budget_too_small_for_the_samples_fails_before_any_call() -> None:
    llm = sampler("Paris", "Paris", "Paris")
    method = SelfConsistency(llm, config=SCSettings(samples=3))
    with pytest.raises(BudgetExceeded, match="sc samples 3 chains of thought") as caught:
        method.run("Capital of France?", budget=Budget(max_calls=2))
    assert llm.calls == [] and caught.value.ledger.summary()["llm_calls"] == 0
    assert method.run("Capital of France?", budget=Budget(max_calls=3)).answer == "Paris"
    # the constrained pick after the samples is one call more than the budget allows
    llm = sampler("someone", "nobody", **{"Choice:$": "Tom Hanks"})
    method = SelfConsistency(llm, config=SCSettings(samples=2))
    with pytest.raises(BudgetExceeded):
        method.run("Who starred in Big?", choices=CHOICES, budget=Budget(max_calls=2))
    assert len(llm.calls) == 2


def test_seeded_samples_come_from_the_cache_the_second_time(tmp_path: Path) -> None:
    llm = ScriptedLLM(default="So the answer is: Paris")
    cached = CachedLLM(llm, ResponseCache(tmp_path / "replies.sqlite"))
    method = SelfConsistency(cached, config=SCSettings(samples=3))
    assert method.run("Capital of France?").usage.cache_hits == 0
    again = method.run("Capital of France?")
    assert again.answer == "Paris" and again.usage.cache_hits == 3 and len(llm.calls) == 3
    other_seeds = SelfConsistency(cached, config=SCSettings(samples=3, seed=2))
    assert other_seeds.run("Capital of France?").usage.cache_hits == 1  # seed 2 is shared


def test_helpers() -> None:
    assert vote_key("The Matrix.") == vote_key("matrix") == "matrix"
    assert vote_key("Bill Murray and Scarlett Johansson") == vote_key(
        "Scarlett Johansson, Bill Murray"
    )
    assert vote_key("") == vote_key("the.") == ""
    assert match_choice("the Matrix", ["Matrix", "Heat"]) == 0
    assert match_choice("Heat", ["Matrix", "Heat (film)"]) is None
    assert majority([None, "b", "a", "b", "a"]) == ({"b": 2, "a": 2}, {"b": 1, "a": 2})

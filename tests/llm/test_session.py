"""Ledger, budget and reply cache, driven by the scripted LLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.errors import BudgetExceeded, LLMError, LLMOutputError
from middleware.llm import (
    Budget,
    CachedLLM,
    LLMSession,
    ResponseCache,
    ScriptedLLM,
    render,
    user,
)


def scripted() -> ScriptedLLM:
    return ScriptedLLM(
        [("capital of France", "Paris"), ("Pick", lambda text: "Lyon")], default="no idea"
    )


def test_ledger_records_every_call_by_step() -> None:
    session = LLMSession(scripted())
    session.complete("expand", [user("What is the capital of France?")])
    session.complete("expand", [user("And of Spain?")])
    session.choose("pick", [user("Pick a city")], ["Paris", "Lyon"])
    summary = session.ledger.summary()
    assert summary["llm_calls"] == 3
    assert list(summary["by_step"]) == ["expand", "pick"]
    assert summary["by_step"]["expand"]["llm_calls"] == 2
    assert summary["prompt_tokens"] == sum(c.prompt_tokens for c in session.ledger.calls) > 0
    assert {c.backend for c in session.ledger.calls} == {"scripted"}


def test_step_past_max_calls_raises_with_partial_ledger() -> None:
    llm = scripted()
    session = LLMSession(llm, budget=Budget(max_calls=2))
    session.complete("one", [user("What is the capital of France?")])
    session.choose("two", [user("Pick a city")], ["Paris", "Lyon"])
    with pytest.raises(BudgetExceeded) as caught:
        session.complete("three", [user("more")])
    err = caught.value
    assert err.status == 422 and "'three' would be LLM call 3" in str(err)
    assert [c.step for c in err.ledger.calls] == ["one", "two"]
    assert err.to_dict()["usage"]["llm_calls"] == 2
    assert len(llm.calls) == 2  # the third call never reached the model


def test_token_budget_clamps_and_then_stops() -> None:
    llm = ScriptedLLM(default="one two three four five")
    session = LLMSession(llm, budget=Budget(max_tokens=12))
    session.complete("a", [user("w1 w2 w3 w4")], max_tokens=100)
    assert llm.calls[0].max_tokens == 12  # nothing spent yet: all 12 remain
    session.complete("b", [user("w1 w2 w3")], max_tokens=100)
    assert llm.calls[1].max_tokens == 3  # 9 of 12 spent
    with pytest.raises(BudgetExceeded, match="tokens are already spent"):
        session.complete("c", [user("x")])


def test_prompt_stop_and_length_apply() -> None:
    llm = ScriptedLLM(default="Paris\nand more")
    session = LLMSession(llm)
    prompt = render("choose", task="Capital of France?", options=["Paris"])
    done = session.complete("x", prompt, stop=["\n"], max_tokens=5)
    assert done.text == "Paris" and llm.calls[0].max_tokens == 5


def test_second_identical_call_is_a_cache_hit(tmp_path: Path) -> None:
    llm = scripted()
    cached = CachedLLM(llm, ResponseCache(tmp_path / "replies.sqlite"))
    session = LLMSession(cached)
    first = session.complete("q", [user("What is the capital of France?")])
    second = session.complete("q", [user("What is the capital of France?")])
    assert first.text == second.text == "Paris"
    assert len(llm.calls) == 1
    calls = session.ledger.calls
    assert [c.cached for c in calls] == [False, True]
    assert calls[1].requests == 0 and calls[1].seconds == 0.0
    assert session.ledger.summary()["cache_hits"] == 1


def test_cache_survives_a_new_process_and_separates_parameters(tmp_path: Path) -> None:
    path = tmp_path / "replies.sqlite"
    llm = scripted()
    CachedLLM(llm, ResponseCache(path)).complete([user("capital of France")], max_tokens=8)
    llm2 = ScriptedLLM(default="different", identity=llm.identity)  # same model, new process
    again = CachedLLM(llm2, ResponseCache(path))
    assert again.complete([user("capital of France")], max_tokens=8).cached
    assert not again.complete([user("capital of France")], max_tokens=9).cached
    assert not again.complete([user("capital of France")], temperature=0.7).cached
    assert len(ResponseCache(path)) == 2  # temperature > 0 is never stored


def test_choose_is_cached_too(tmp_path: Path) -> None:
    llm = scripted()
    cached = CachedLLM(llm, ResponseCache(tmp_path / "r.sqlite"))
    first = cached.choose([user("Pick a city")], ["Paris", "Lyon"])
    second = cached.choose([user("Pick a city")], ["Paris", "Lyon"])
    assert (first.index, second.index) == (1, 1) and second.completion.cached
    assert len(llm.calls) == 1


def test_scripted_choice_must_be_an_option() -> None:
    llm = ScriptedLLM([("Pick", "Marseille")])
    with pytest.raises(LLMOutputError, match="not one of the 2 options"):
        llm.choose([user("Pick a city")], ["Paris", "Lyon"])


def test_scripted_without_rule_or_default_fails_loudly() -> None:
    with pytest.raises(LLMError, match="no scripted rule"):
        ScriptedLLM().complete([user("anything")])


def test_choose_refuses_empty_options() -> None:
    with pytest.raises(ValueError, match="at least one option"):
        scripted().choose([user("Pick")], [])

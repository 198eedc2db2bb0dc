"""Seeds: the reply cache keys sampled calls by seed and temperature; sessions and runs
pass both through to the model."""

from __future__ import annotations

from pathlib import Path

from middleware.llm import CachedLLM, LLMSession, ResponseCache, ScriptedLLM, user
from middleware.llm.base import Completion
from middleware.llm.cache import cache_key
from middleware.methods.run import Run

PROMPT = [user("Name a city.")]


def cached(tmp_path: Path) -> tuple[CachedLLM, ScriptedLLM]:
    llm = ScriptedLLM(default="Paris", identity="scripted:seeds")
    return CachedLLM(llm, ResponseCache(tmp_path / "replies.sqlite")), llm


def test_temperature_zero_keys_are_unchanged(tmp_path: Path) -> None:
    """A cache written before seeds existed still answers temperature-0 calls."""
    cache = ResponseCache(tmp_path / "replies.sqlite")
    old_key = cache_key(
        kind="complete", llm="scripted:seeds", messages=PROMPT, max_tokens=8, stop=[]
    )
    cache.put(old_key, Completion("Lyon", "scripted", "rules").to_dict())
    old_choice = cache_key(
        kind="choose", llm="scripted:seeds", messages=PROMPT, options=["Paris", "Lyon"]
    )
    done = Completion("Lyon", "scripted", "rules").to_dict()
    cache.put(old_choice, {"index": 1, "completion": done, "notes": []})
    llm = ScriptedLLM(default="Paris", identity="scripted:seeds")
    wrapped = CachedLLM(llm, cache)
    for seed in (None, 7):  # at temperature 0 the seed changes nothing, nor the key
        hit = wrapped.complete(PROMPT, max_tokens=8, seed=seed)
        assert (hit.text, hit.cached) == ("Lyon", True)
        picked = wrapped.choose(PROMPT, ["Paris", "Lyon"], seed=seed)
        assert (picked.option, picked.completion.cached) == ("Lyon", True)
    assert llm.calls == []


def test_seeded_samples_are_cached_by_seed_and_temperature(tmp_path: Path) -> None:
    wrapped, llm = cached(tmp_path)
    first = wrapped.complete(PROMPT, max_tokens=8, temperature=0.7, seed=1)
    again = wrapped.complete(PROMPT, max_tokens=8, temperature=0.7, seed=1)
    assert (first.cached, again.cached) == (False, True)
    assert not wrapped.complete(PROMPT, max_tokens=8, temperature=0.7, seed=2).cached
    assert not wrapped.complete(PROMPT, max_tokens=8, temperature=0.9, seed=1).cached
    assert not wrapped.complete(PROMPT, max_tokens=8, temperature=0.0, seed=1).cached
    assert [(c.temperature, c.seed) for c in llm.calls] == [(0.7, 1), (0.7, 2), (0.9, 1), (0.0, 1)]


def test_unseeded_samples_are_never_cached(tmp_path: Path) -> None:
    wrapped, llm = cached(tmp_path)
    for _ in range(2):
        assert not wrapped.complete(PROMPT, max_tokens=8, temperature=0.7).cached
        assert not wrapped.choose(PROMPT, ["Paris", "Lyon"], temperature=0.7).completion.cached
    assert len(llm.calls) == 4 and len(wrapped.cache) == 0


def test_seeded_choices_are_cached_by_seed(tmp_path: Path) -> None:
    wrapped, llm = cached(tmp_path)
    options = ["Paris", "Lyon"]
    assert not wrapped.choose(PROMPT, options, temperature=1.0, seed=4).completion.cached
    assert wrapped.choose(PROMPT, options, temperature=1.0, seed=4).completion.cached
    assert not wrapped.choose(PROMPT, options, temperature=1.0, seed=5).completion.cached
    assert [(c.kind, c.seed) for c in llm.calls] == [("choose", 4), ("choose", 5)]


def test_session_passes_seed_and_temperature_through(tmp_path: Path) -> None:
    llm = ScriptedLLM(default="Paris")
    session = LLMSession(llm)
    session.complete("sample", PROMPT, temperature=0.7, seed=3)
    session.choose("pick", PROMPT, ["Paris", "Lyon"], temperature=0.4, seed=8)
    session.complete("plain", PROMPT)
    assert [(c.kind, c.temperature, c.seed) for c in llm.calls] == [
        ("complete", 0.7, 3),
        ("choose", 0.4, 8),
        ("complete", 0.0, None),
    ]
    wrapped, inner = cached(tmp_path)
    LLMSession(wrapped).complete("sample", PROMPT, temperature=0.7, seed=3)
    assert (inner.calls[0].temperature, inner.calls[0].seed) == (0.7, 3)


def test_run_passes_seed_and_temperature_through() -> None:
    llm = ScriptedLLM(default="Paris")
    run = Run("Name a city.", "demo", llm)
    with run.step("sample") as step:
        run.complete(step, PROMPT, temperature=0.7, seed=11)
    with run.step("pick") as step:
        run.choose(step, PROMPT, ["Paris", "Lyon"], temperature=0.2, seed=12)
    assert [(c.temperature, c.seed) for c in llm.calls] == [(0.7, 11), (0.2, 12)]

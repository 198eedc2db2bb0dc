"""One behaviour suite for every LLM backend, and the scripted models the method suite uses.

A backend's test class inherits ``LLMConformance`` and provides an ``llm`` fixture::

    class TestMyLLM(LLMConformance):
        @pytest.fixture(scope="class")
        @classmethod
        def llm(cls) -> MyLLM:
            return MyLLM(...)
"""

from __future__ import annotations

import re

import pytest

from middleware.llm.base import LLM, Completion, user
from middleware.llm.scripted import ScriptedLLM

ODD_OPTIONS = ['say "hi"', "back\\slash", "Zoë Saldaña", "東京", "a|b", "{x}", "50%"]
_OPTIONS = re.compile(r"Options:\n(.+)")


def first_option_or(text: str) -> ScriptedLLM:
    """A scripted model that picks the first option when asked to choose and otherwise
    replies ``text``: cooperative, knows nothing, so every method can finish."""

    def reply(prompt: str) -> str:
        listed = _OPTIONS.findall(prompt)
        return listed[-1].strip() if listed else text

    return ScriptedLLM(default=reply, model="agreeable")


def garbled() -> ScriptedLLM:
    """A scripted model whose every reply parses as nothing: no option, no Cypher, no list."""
    return ScriptedLLM(default="%%% ?? ]]", model="garbled")


class LLMConformance:
    """Subclasses provide an ``llm`` fixture: any object meant to satisfy ``LLM``.

    ``seeded_sampling_repeats`` says whether the backend promises that a sampled call
    with a seed repeats exactly (the embedded model does; a remote server may only try,
    as OpenAI's does): a subclass for such a server sets it to False.
    """

    seeded_sampling_repeats = True

    def test_satisfies_protocol(self, llm: LLM) -> None:
        assert isinstance(llm, LLM)
        assert llm.name and isinstance(llm.name, str)
        assert llm.model and isinstance(llm.model, str)

    def test_complete_reports_its_cost(self, llm: LLM) -> None:
        done = llm.complete([user("Q: What is the capital of France?\nA:")], max_tokens=8)
        assert isinstance(done, Completion) and isinstance(done.text, str)
        assert done.backend == llm.name
        assert done.prompt_tokens > 0 and done.completion_tokens >= 0
        assert done.requests >= 1 and done.route and done.seconds >= 0

    def test_complete_stops_at_a_stop_marker(self, llm: LLM) -> None:
        done = llm.complete([user("Count: 1\n2\n3\n")], max_tokens=16, stop=["\n"])
        assert "\n" not in done.text

    def test_deterministic_at_temperature_zero(self, llm: LLM) -> None:
        prompt = [user("Titanic was directed by")]
        first = llm.complete(prompt, max_tokens=8, temperature=0.0).text
        assert llm.complete(prompt, max_tokens=8, temperature=0.0).text == first

    def test_same_seed_and_temperature_repeat_a_sample(self, llm: LLM) -> None:
        if not self.seeded_sampling_repeats:
            pytest.skip("this backend does not promise that a seeded sample repeats")
        prompt = [user("Q: Name a large city.\nA:")]
        for seed in (3, 4):
            first = llm.complete(prompt, max_tokens=8, temperature=1.0, seed=seed).text
            again = llm.complete(prompt, max_tokens=8, temperature=1.0, seed=seed).text
            assert again == first, seed
        options = ["Paris", "Lyon", "Nice"]
        picked = llm.choose([user("Pick one.")], options, temperature=1.0, seed=5).option
        assert llm.choose([user("Pick one.")], options, temperature=1.0, seed=5).option == picked

    def test_choose_returns_one_of_the_options(self, llm: LLM) -> None:
        for options in (["Paris", "Lyon"], ODD_OPTIONS, ["Heat", "Heat (film)", "heat."]):
            choice = llm.choose([user("Pick one.")], options)
            assert choice.option in options and options[choice.index] == choice.option
            assert choice.completion.text == choice.option

    def test_choose_refuses_empty_or_blank_options(self, llm: LLM) -> None:
        with pytest.raises(ValueError):
            llm.choose([user("Pick one.")], [])
        with pytest.raises(ValueError):
            llm.choose([user("Pick one.")], ["Paris", "  "])

"""The embedded llama.cpp backend with the bundled Gemma 3 270M model."""

from __future__ import annotations

import random
import threading

import pytest

from middleware.errors import BadRequest
from middleware.llm import EmbeddedLLM, LLMSession, user
from middleware.llm.local import gbnf_literal, options_grammar

WORDS = ["Paris", "Lyon", "Titanic", "James Cameron", "Kate Winslet", "drama", "1997", "Heat"]
ODD = [
    'say "hi"',
    "back\\slash",
    "Zoë Saldaña",
    "東京",
    "naïve café",
    "O'Hara",
    "a|b",
    "{x}",
    "50%",
]


def option_lists(count: int, seed: int = 7) -> list[list[str]]:
    """Option lists with quotes, unicode, near-duplicates and shared prefixes."""
    rng = random.Random(seed)
    lists = []
    for _ in range(count):
        base = rng.sample(WORDS + ODD, rng.randint(2, 6))
        extra = []
        for option in base[:2]:
            extra.append(
                rng.choice([option + " Jr.", option.lower(), option + ".", option + " (film)"])
            )
        options = list(dict.fromkeys(base + extra))
        rng.shuffle(options)
        lists.append(options)
    return lists


def test_choose_always_returns_one_of_the_options(embedded: EmbeddedLLM) -> None:
    routes = set()
    for options in option_lists(200):
        choice = embedded.choose([user("Which of these is a person?")], options)
        assert choice.option in options, (choice, options)
        assert options[choice.index] == choice.option
        routes.add(choice.completion.route)
    assert routes == {"grammar"}


def test_complete_counts_tokens_and_stops(embedded: EmbeddedLLM) -> None:
    session = LLMSession(embedded)
    done = session.complete(
        "answer", [user("Q: What is the capital of France?\nA:")], max_tokens=12, stop=["\n"]
    )
    assert "\n" not in done.text and done.route == "completions"
    assert done.prompt_tokens > 5 and 0 < done.completion_tokens <= 12
    assert session.ledger.summary()["by_step"]["answer"]["llm_calls"] == 1


def test_deterministic_at_temperature_zero(embedded: EmbeddedLLM) -> None:
    prompt = [user("Titanic was directed by")]
    first = embedded.complete(prompt, max_tokens=8)
    assert embedded.complete(prompt, max_tokens=8).text == first.text


def test_oversized_prompt_is_a_clear_error(embedded: EmbeddedLLM) -> None:
    with pytest.raises(BadRequest, match="over the embedded model's context of 2048"):
        embedded.complete([user("word " * 3000)], max_tokens=8)


def test_threads_share_one_model_safely(embedded: EmbeddedLLM) -> None:
    results: list[str] = []
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            results.append(embedded.choose([user("Pick a city")], ["Paris", "Lyon"]).option)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(set(results)) == 1


def test_gbnf_literals_escape_everything_unusual() -> None:
    assert gbnf_literal("Paris") == '"Paris"'
    assert gbnf_literal('a"b\\c\n') == '"a\\u0022b\\u005Cc\\u000A"'
    assert gbnf_literal("😀") == '"\\U0001F600"'
    grammar = options_grammar(["x", "x", "y"])
    assert grammar == 'root ::= " "? ( "x" | "y" )\n'


def test_the_model_loads_with_weight_repacking_off() -> None:
    """llama.cpp's CPU weight repacking crashed the first decode (SIGSEGV) on AVX-512
    machines; models load with it off, and the library's defaults are restored after."""
    from llama_cpp import llama_cpp as bindings  # what ``Llama`` reads its defaults from

    from middleware.llm.local import no_weight_repacking

    original = bindings.llama_model_default_params
    with no_weight_repacking():
        assert bindings.llama_model_default_params().use_extra_bufts is False
    assert bindings.llama_model_default_params is original
    assert bindings.llama_model_default_params().use_extra_bufts is True

"""The embedded llama.cpp backend with the bundled Gemma 3 270M model."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from middleware.errors import BadRequest
from middleware.llm import EmbeddedLLM, LLMSession, local, user
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


# Option lists the real model gets: quotes and a backslash, accents, other scripts and
# an emoji, grammar punctuation, a leading space, options that begin other options, and
# a single option. Four calls, a few seconds each on a busy 2-core machine (it was 200
# calls); test_choose_maps_every_sentence_of_its_grammar_to_one_of_the_options checks
# 200 random lists against the grammar without the model.
TRICKY = [
    ['say "hi"', "back\\slash", "Zoë Saldaña", "東京", "😀 smile"],
    ["a|b", "{x}", "50%", "( root ::= x )", " Paris", "1997."],
    ["Kate", "Kate Winslet", "Kate Winslet Jr.", "kate winslet"],
    ["James Cameron"],
]


def test_choose_always_returns_one_of_the_options(embedded: EmbeddedLLM) -> None:
    routes = set()
    for options in TRICKY:
        choice = embedded.choose([user("Which of these is a person?")], options)
        assert choice.option in options, (choice, options)
        assert options[choice.index] == choice.option
        routes.add(choice.completion.route)
    assert routes == {"grammar"}


_LITERAL = re.compile(r'"((?:[^"\\]|\\u[0-9A-F]{4}|\\U[0-9A-F]{8})*)"')


def grammar_sentences(grammar: str) -> list[str]:
    """The options an ``options_grammar`` grammar allows (after its optional space)."""
    head, _, alternatives = grammar.partition("( ")
    assert head == 'root ::= " "? ' and alternatives.endswith(" )\n"), grammar

    def decoded(literal: str) -> str:
        return re.sub(r"\\[uU]([0-9A-F]+)", lambda m: chr(int(m.group(1), 16)), literal)

    found = [decoded(m.group(1)) for m in _LITERAL.finditer(alternatives)]
    assert " | ".join(f'"{m.group(1)}"' for m in _LITERAL.finditer(alternatives)) + " )\n" == (
        alternatives
    )
    return found


class GrammarSpeaker:
    """Stands in for llama.cpp under a grammar: it answers with the text it is told to,
    after checking that the grammar allows that text (a whole sentence, or one cut short
    by the token budget) and that the budget fits every whole sentence."""

    def __init__(self) -> None:
        self.say = ""
        self.grammars: list[str] = []

    def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
        return list(range(len(text.split())))

    def create_completion(self, prompt: str, **options: Any) -> dict[str, Any]:
        sentences = self.grammars[-1]
        whole = [s for o in grammar_sentences(sentences) for s in (o, " " + o)]
        assert any(s.startswith(self.say) for s in whole), (self.say, sentences)
        assert options["max_tokens"] >= max(len(s.encode()) for s in whole)
        assert options["grammar"] is not None
        return {
            "choices": [{"text": self.say, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1},
        }


def test_choose_maps_every_sentence_of_its_grammar_to_one_of_the_options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The property above over 200 random option lists, without the model: each list's
    grammar allows exactly its options, and whatever the grammar lets a model say (an
    option, with or without its leading space, or one cut short) ``choose`` turns into
    one of the options, the one said when it was said whole."""
    speaker = GrammarSpeaker()
    real_grammar = local.options_grammar

    def kept(options: Sequence[str]) -> str:
        speaker.grammars.append(real_grammar(options))
        return speaker.grammars[-1]

    monkeypatch.setattr(local, "options_grammar", kept)
    llm = EmbeddedLLM(model_path=tmp_path / "none.gguf", cache_dir=tmp_path)
    monkeypatch.setattr(llm, "_llama", lambda: (speaker, threading.Lock()))
    for options in [*option_lists(200), *TRICKY]:
        assert grammar_sentences(real_grammar(options)) == list(dict.fromkeys(options))
        for option in dict.fromkeys(options):
            spoken = " " + option
            for said in (option, spoken, spoken[:2], spoken[: len(spoken) // 2], spoken[:-1]):
                if not said.strip():
                    continue
                speaker.say = said
                choice = llm.choose([user("Which of these is a person?")], options)
                assert choice.option in options and options[choice.index] == choice.option
                if said in (option, spoken) and not (said == spoken and spoken in options):
                    assert choice.option == option, (said, choice, options)
                assert choice.completion.route == "grammar"


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


@pytest.mark.parametrize(
    ("cpuinfo", "repacked"),
    [
        ("processor : 0\nflags : fpu sse2 avx avx2 fma f16c\n", True),
        ("processor : 0\nflags : avx2 avx512f avx512bw\n", False),
        ("processor : 0\nFeatures : fp asimd aes\n", False),  # ARM: not known safe
        ("flags :\n", False),
        (None, False),  # no /proc/cpuinfo (another system)
    ],
)
def test_the_model_loads_with_weight_repacking_off_unless_known_safe(
    tmp_path: Path, cpuinfo: str | None, repacked: bool
) -> None:
    """llama.cpp's CPU weight repacking crashed the first decode (SIGSEGV) on AVX-512
    machines: models load with it on (llama.cpp's default) only on an x86 CPU whose
    flags show no AVX-512. The library's defaults are restored after."""
    from llama_cpp import llama_cpp as bindings  # what ``Llama`` reads its defaults from

    from middleware.llm.local import safe_weight_repacking

    info = tmp_path / "cpuinfo"
    if cpuinfo is not None:
        info.write_text(cpuinfo)
    original = bindings.llama_model_default_params
    with safe_weight_repacking(info):
        assert bindings.llama_model_default_params().use_extra_bufts is repacked
    assert bindings.llama_model_default_params is original
    assert bindings.llama_model_default_params().use_extra_bufts is True

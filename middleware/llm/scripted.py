"""A deterministic LLM for tests: rules map prompt patterns to replies; every call is kept.

>>> llm = ScriptedLLM([(r"Who directed (\\w+)", lambda text: "James Cameron")], default="I do not know")
>>> llm.complete([{"role": "user", "content": "Who directed Titanic?"}]).text
'James Cameron'
>>> llm.complete([{"role": "user", "content": "Hello"}]).text
'I do not know'
>>> len(llm.calls)
2
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from middleware.errors import LLMError, LLMOutputError
from middleware.llm.base import DEFAULT_MAX_TOKENS, Choice, Completion, Message, check_options
from middleware.llm.options import match_option, with_options
from middleware.llm.prompt_templates import flatten

Reply = str | Callable[[str], str]
Rule = tuple[str | re.Pattern[str], Reply]


@dataclass(frozen=True)
class ScriptedCall:
    """What one call received and what it answered."""

    kind: str
    messages: list[Message]
    prompt: str
    options: list[str] | None
    reply: str
    max_tokens: int
    stop: tuple[str, ...]
    temperature: float = 0.0
    seed: int | None = None  # a scripted reply ignores both; tests read what each call got


def count_tokens(text: str) -> int:
    """Whitespace-separated words: a stand-in for a tokenizer, stable across runs."""
    return len(text.split())


class ScriptedLLM:
    """Replies by the first rule whose pattern is found in the prompt text.

    A rule's reply is a string or a callable that gets the prompt text (all messages
    flattened). ``choose()`` sees the prompt with the option list added; its reply
    must name one option. With no matching rule, ``default`` answers, and with no
    default the call fails, which is what a test usually wants to hear about.
    """

    name = "scripted"

    def __init__(
        self,
        rules: Sequence[Rule] = (),
        *,
        default: Reply | None = None,
        model: str = "rules",
        identity: str | None = None,
    ) -> None:
        self.rules = [(re.compile(p) if isinstance(p, str) else p, r) for p, r in rules]
        self.default = default
        self.model = model
        self.calls: list[ScriptedCall] = []
        # Cache key part: unique per instance unless a test says two are the same model.
        self.identity = identity or f"scripted:{model}:{id(self)}"

    def _reply(self, prompt: str) -> str:
        for pattern, reply in self.rules:
            if pattern.search(prompt):
                return reply(prompt) if callable(reply) else reply
        if self.default is None:
            raise LLMError(
                f"no scripted rule matches the prompt: {prompt[-200:]!r}",
                hint="add a rule or a default reply",
            )
        return self.default(prompt) if callable(self.default) else self.default

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int | None = None,
    ) -> Completion:
        started = time.perf_counter()
        prompt = flatten(messages)
        reply = self._reply(prompt)
        for marker in stop:
            if marker and marker in reply:
                reply = reply.split(marker, 1)[0]
        self.calls.append(
            ScriptedCall(
                "complete",
                list(messages),
                prompt,
                None,
                reply,
                max_tokens,
                tuple(stop),
                temperature,
                seed,
            )
        )
        return self._completion(reply, prompt, reply, started)

    def choose(
        self,
        messages: Sequence[Message],
        options: Sequence[str],
        *,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Choice:
        started = time.perf_counter()
        listed = check_options(options)
        full = with_options(messages, listed)
        prompt = flatten(full)
        reply = self._reply(prompt)
        self.calls.append(
            ScriptedCall("choose", full, prompt, listed, reply, 0, (), temperature, seed)
        )
        index = match_option(reply, listed)
        if index is None:
            raise LLMOutputError(
                f"scripted reply {reply!r} is not one of the {len(listed)} options", raw=reply
            )
        completion = self._completion(listed[index], prompt, reply, started)
        return Choice(index, listed[index], completion)

    def _completion(self, text: str, prompt: str, reply: str, started: float) -> Completion:
        return Completion(
            text,
            self.name,
            self.model,
            count_tokens(prompt),
            count_tokens(reply),
            time.perf_counter() - started,
            route="scripted",
            finish_reason="stop",
        )

"""The LLM as one request sees it: every call named by its step, counted and budgeted.

>>> from middleware.llm.scripted import ScriptedLLM
>>> session = LLMSession(ScriptedLLM(default="42"), budget=Budget(max_calls=2))
>>> session.complete("answer", [{"role": "user", "content": "Q?"}]).text
'42'
>>> session.ledger.summary()["by_step"]["answer"]["llm_calls"]
1
"""

from __future__ import annotations

from collections.abc import Sequence

from middleware.llm.base import DEFAULT_MAX_TOKENS, LLM, Choice, Completion, Message
from middleware.llm.ledger import Budget, Ledger
from middleware.llm.prompt_templates import Prompt
from middleware.support.tracing import SpanHandle, span


def _messages(prompt: Prompt | Sequence[Message]) -> tuple[list[Message], Prompt | None]:
    if isinstance(prompt, Prompt):
        return prompt.messages, prompt
    return list(prompt), None


def _note(traced: SpanHandle, completion: Completion) -> None:
    traced.set(
        backend=completion.backend,
        model=completion.model,
        route=completion.route,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
    )


class LLMSession:
    """Wraps an LLM for one request: a ledger of calls and a budget checked before each."""

    def __init__(
        self, llm: LLM, *, ledger: Ledger | None = None, budget: Budget | None = None
    ) -> None:
        self.llm = llm
        self.ledger = ledger if ledger is not None else Ledger()
        self.budget = budget or Budget()

    def complete(
        self,
        step: str,
        prompt: Prompt | Sequence[Message],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
    ) -> Completion:
        """One completion for ``step``; a Prompt's own stop strings and length apply."""
        messages, rendered = _messages(prompt)
        self.budget.check(step, self.ledger)
        limit = max_tokens or (rendered.max_tokens if rendered else None) or DEFAULT_MAX_TOKENS
        remaining = self.budget.remaining_tokens(self.ledger)
        if remaining is not None:
            limit = min(limit, remaining)
        stops = stop if stop is not None else (rendered.stop if rendered else ())
        with span("kgmw.llm", step=step, call="complete", model=self.llm.model) as traced:
            completion = self.llm.complete(
                messages, max_tokens=limit, temperature=temperature, stop=stops, seed=seed
            )
            _note(traced, completion)
        self.ledger.record(step, completion)
        return completion

    def choose(
        self,
        step: str,
        prompt: Prompt | Sequence[Message],
        options: Sequence[str],
        *,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Choice:
        """Exactly one of ``options`` for ``step``."""
        messages, _ = _messages(prompt)
        self.budget.check(step, self.ledger)
        with span("kgmw.llm", step=step, call="choose", model=self.llm.model) as traced:
            choice = self.llm.choose(messages, options, temperature=temperature, seed=seed)
            _note(traced, choice.completion)
        self.ledger.record(step, choice.completion)
        return choice

"""Usage accounting: every LLM call of a request, and the budget it must stay within.

>>> from middleware.llm.base import Completion
>>> ledger = Ledger()
>>> ledger.record("answer", Completion("Paris", "scripted", "rules", 12, 3, 0.01))
>>> ledger.summary()["llm_calls"], ledger.summary()["by_step"]["answer"]["prompt_tokens"]
(1, 12)
>>> Budget(max_calls=1).check("again", ledger)
Traceback (most recent call last):
...
middleware.errors.BudgetExceeded: step 'again' would be LLM call 2, over the budget of 1 call (raise max_calls to allow more)
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any

from middleware.errors import BudgetExceeded
from middleware.llm.base import Completion


@dataclass(frozen=True)
class LLMCall:
    """One call as the ledger records it."""

    step: str
    backend: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cached: bool
    route: str
    requests: int

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 4)
        return data


def _totals(calls: list[LLMCall]) -> dict[str, Any]:
    return {
        "llm_calls": len(calls),
        "prompt_tokens": sum(c.prompt_tokens for c in calls),
        "completion_tokens": sum(c.completion_tokens for c in calls),
        "cache_hits": sum(1 for c in calls if c.cached),
        "model_requests": sum(c.requests for c in calls),
        "llm_seconds": round(sum(c.seconds for c in calls), 4),
    }


class Ledger:
    """Thread-safe list of the LLM calls one request made."""

    def __init__(self) -> None:
        self._calls: list[LLMCall] = []
        self._lock = threading.Lock()

    def record(self, step: str, completion: Completion) -> None:
        call = LLMCall(
            step=step,
            backend=completion.backend,
            model=completion.model,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            seconds=completion.seconds,
            cached=completion.cached,
            route=completion.route,
            requests=0 if completion.cached else completion.requests,
        )
        with self._lock:
            self._calls.append(call)

    @property
    def calls(self) -> list[LLMCall]:
        with self._lock:
            return list(self._calls)

    def __len__(self) -> int:
        with self._lock:
            return len(self._calls)

    @property
    def tokens(self) -> int:
        with self._lock:
            return sum(c.prompt_tokens + c.completion_tokens for c in self._calls)

    def summary(self) -> dict[str, Any]:
        """Totals, then the same figures per step (in the order steps first ran)."""
        calls = self.calls
        by_step: dict[str, list[LLMCall]] = {}
        for call in calls:
            by_step.setdefault(call.step, []).append(call)
        return {**_totals(calls), "by_step": {k: _totals(v) for k, v in by_step.items()}}


@dataclass(frozen=True)
class Budget:
    """Most LLM calls and tokens (prompt + completion) one request may spend.

    Cache hits count too, so a method behaves the same with a warm or a cold cache.
    """

    max_calls: int | None = None
    max_tokens: int | None = None
    cancelled: threading.Event | None = None  # set when nobody waits for the answer

    def check(self, step: str, ledger: Ledger) -> None:
        """Raise BudgetExceeded if one more call would go over the budget, or if the
        request was cancelled (its client went away)."""
        done = len(ledger)
        if self.cancelled is not None and self.cancelled.is_set():
            raise BudgetExceeded(
                f"the client went away: step {step!r} and the LLM calls after it were not "
                f"made ({done} made)",
                hint="nothing to do: the request was abandoned",
                ledger=ledger,
            )
        if self.max_calls is not None and done + 1 > self.max_calls:
            plural = "call" if self.max_calls == 1 else "calls"
            raise BudgetExceeded(
                f"step {step!r} would be LLM call {done + 1}, over the budget of "
                f"{self.max_calls} {plural}",
                hint="raise max_calls to allow more",
                ledger=ledger,
            )
        if self.max_tokens is not None and ledger.tokens >= self.max_tokens:
            raise BudgetExceeded(
                f"step {step!r} needs an LLM call but {ledger.tokens} of "
                f"{self.max_tokens} tokens are already spent",
                hint="raise max_tokens to allow more",
                ledger=ledger,
            )

    def remaining_tokens(self, ledger: Ledger) -> int | None:
        if self.max_tokens is None:
            return None
        return max(1, self.max_tokens - ledger.tokens)

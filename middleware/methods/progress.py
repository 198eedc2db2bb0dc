"""What a ``Run`` tells a listener while it works: steps starting and ending, LLM calls.

A listener is any callable taking a ``StepEvent`` (``kgmw ask`` prints them on a
terminal; ``/v1/answer?stream=true`` sends them as server-sent events). It is called
in the thread that runs the method, so it must be quick; what it raises propagates.

>>> event = StepEvent("llm", "answer", index=2, call=3, most=12)
>>> event.describe()
'answer: LLM call 3 of at most 12'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

EventKind = Literal["start", "end", "llm"]


@dataclass(frozen=True)
class StepEvent:
    """One moment of a run. ``index`` numbers the steps of the run from 0; an ``end``
    carries what the step spent, an ``llm`` event the call's number (from 1) and the
    most the budget allows (None: no bound)."""

    kind: EventKind
    step: str
    index: int = 0
    seconds: float = 0.0
    llm_calls: int = 0
    sparql_queries: int = 0
    failed: bool = False
    call: int = 0
    most: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """The event in a few words, for a person watching."""
        if self.kind == "start":
            return f"{self.step} ..."
        if self.kind == "llm":
            bound = f" of at most {self.most}" if self.most is not None else ""
            return f"{self.step}: LLM call {self.call}{bound}"
        calls = f", {self.llm_calls} LLM call{'s' if self.llm_calls != 1 else ''}"
        queries = f", {self.sparql_queries} SPARQL" if self.sparql_queries else ""
        outcome = "failed" if self.failed else "done"
        return f"{self.step} {outcome} ({self.seconds:.2f} s{calls}{queries})"


StepListener = Callable[[StepEvent], None]

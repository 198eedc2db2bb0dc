"""A method's work over several sources: one task per source, failures reported.

A source that fails (an endpoint down, a timeout, a query it rejects) becomes a
``SourceFailure`` and the others go on; only when every source fails is the first
error raised. Budget and LLM errors are not a source's fault and always propagate.
Tasks run one source after the other in the calling thread, so a method's ``Run``
counts every SPARQL query it caused.

>>> from middleware.kg.backends.local import LocalStore
>>> a, b = LocalStore(name="a"), LocalStore(name="b")
>>> out = fan_out([a, b], lambda g: len(g))
>>> [(g.name, n) for g, n in out.results], out.failures
([('a', 0), ('b', 0)], [])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from middleware.errors import BudgetExceeded, LLMError, MiddlewareError
from middleware.kg.backends.multi import check_names
from middleware.kg.base import KnowledgeGraph

T = TypeVar("T")


@dataclass(frozen=True)
class SourceFailure:
    """A source that could not do its part, and why."""

    source: str
    error: str  # the error class, e.g. EndpointTimeout
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source, "error": self.error, "message": self.message}

    def __str__(self) -> str:
        return f"source {self.source!r} failed ({self.error}): {self.message}"


@dataclass
class FanOut(Generic[T]):
    """Each answering source with its result, and the sources that failed."""

    results: list[tuple[KnowledgeGraph, T]] = field(default_factory=list)
    failures: list[SourceFailure] = field(default_factory=list)
    first_error: MiddlewareError | None = None


def fan_out(
    graphs: Sequence[KnowledgeGraph],
    task: Callable[[KnowledgeGraph], T],
    *,
    raise_if_all_fail: bool = True,
) -> FanOut[T]:
    """``task(graph)`` for every graph; failures are collected, unless all fail."""
    check_names(graphs)
    out: FanOut[T] = FanOut()
    for graph in graphs:
        try:
            out.results.append((graph, task(graph)))
        except (BudgetExceeded, LLMError):
            raise  # not the source's fault: the request itself cannot go on
        except MiddlewareError as err:
            out.first_error = out.first_error or err
            out.failures.append(SourceFailure(graph.name, type(err).__name__, str(err)))
    if raise_if_all_fail and graphs and not out.results and out.first_error is not None:
        raise out.first_error
    return out

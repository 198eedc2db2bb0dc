"""Several graphs at once: one task per source, failures reported instead of raised.

Triples carry the name of the graph they came from (``Triple.source``), so results
from several sources can be merged and still say where each fact lives. A source that
fails (an endpoint down, a timeout, a query it rejects) is reported as a
``SourceFailure`` and the others go on; only when every source fails is the first
error raised.

Tasks run one source after the other in the calling thread, so a method's ``Run``
counts every SPARQL query it caused.

>>> from middleware.kg.local import LocalStore
>>> a, b = LocalStore(name="a"), LocalStore(name="b")
>>> out = fan_out([a, b], lambda g: len(g))
>>> [(g.name, n) for g, n in out.results], out.failures
([('a', 0), ('b', 0)], [])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from middleware.errors import BadRequest, BudgetExceeded, LLMError, MiddlewareError
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


def check_names(graphs: Sequence[KnowledgeGraph]) -> None:
    """Sources must have distinct names: facts are told apart by them."""
    seen: set[str] = set()
    for graph in graphs:
        if graph.name in seen:
            raise BadRequest(
                f"two sources are both named {graph.name!r}",
                hint="give each source its own name (LocalStore(name=...), [sources.NAME])",
            )
        seen.add(graph.name)


def fan_out(graphs: Sequence[KnowledgeGraph], task: Callable[[KnowledgeGraph], T]) -> FanOut[T]:
    """``task(graph)`` for every graph; failures are collected, unless all fail."""
    check_names(graphs)
    out: FanOut[T] = FanOut()
    first: MiddlewareError | None = None
    for graph in graphs:
        try:
            out.results.append((graph, task(graph)))
        except (BudgetExceeded, LLMError):
            raise  # not the source's fault: the request itself cannot go on
        except MiddlewareError as err:
            first = first or err
            out.failures.append(SourceFailure(graph.name, type(err).__name__, str(err)))
    if graphs and not out.results and first is not None:
        raise first
    return out

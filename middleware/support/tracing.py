"""OpenTelemetry spans when the ``otel`` extra is installed and a tracer provider is set.

Answers, method steps, LLM calls and SPARQL queries each open a ``span``. Without
OpenTelemetry installed, or before anything set a tracer provider (the SDK in code,
or ``opentelemetry-instrument`` from the ``OTEL_*`` environment variables), ``span``
is one shared do-nothing context manager: no tracer is looked up, no object is made.
``docs/observability.md`` says how to turn it on.

>>> with span("kgmw.example", source="demo") as handle:
...     handle.set(rows=3)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

AttributeValue = str | int | float | bool | None

try:
    from opentelemetry import trace as _trace
except ImportError:  # the otel extra is not installed: every span is the no-op one
    _trace = None  # type: ignore[assignment]

TRACER_NAME = "kg-middleware"
_chosen: list[Any] = []  # a provider given to use_provider, else OpenTelemetry's global one


class SpanHandle:
    """Attributes set on a span after it opened (what a call spent); a no-op here."""

    def set(self, **attributes: AttributeValue) -> None:
        """Record ``attributes`` on the span (None values are left out)."""


_NOTHING = SpanHandle()


class _Live(SpanHandle):
    def __init__(self, span: Any) -> None:
        self._span = span

    def set(self, **attributes: AttributeValue) -> None:
        self._span.set_attributes({k: v for k, v in attributes.items() if v is not None})


def use_provider(provider: Any | None) -> None:
    """Send spans to ``provider`` (an OpenTelemetry ``TracerProvider``) instead of the
    global one; None goes back to the global one."""
    _chosen[:] = [] if provider is None else [provider]


def _provider() -> Any | None:
    """The provider spans go to; None while OpenTelemetry is absent or nothing set one
    (the API's default proxy provider records nothing)."""
    if _trace is None:
        return None
    if _chosen:
        return _chosen[0]
    found = _trace.get_tracer_provider()
    return None if isinstance(found, _trace.ProxyTracerProvider) else found


def enabled() -> bool:
    """Whether spans are recorded now."""
    return _provider() is not None


class _NoSpan:
    """The context manager of every span while none is recorded: one shared object."""

    def __enter__(self) -> SpanHandle:
        return _NOTHING

    def __exit__(self, *exc: object) -> None:
        return None


_NO_SPAN = _NoSpan()


def span(name: str, **attributes: AttributeValue) -> AbstractContextManager[SpanHandle]:
    """A span named ``name`` around a ``with`` block, a child of the current one; an
    exception leaving the block is recorded on it and marks it failed. While none is
    recorded, the shared no-op context manager: nothing is made per call."""
    provider = _provider()
    if provider is None:
        return _NO_SPAN
    return _recorded(provider, name, attributes)


@contextmanager
def _recorded(
    provider: Any, name: str, attributes: dict[str, AttributeValue]
) -> Iterator[SpanHandle]:
    tracer = provider.get_tracer(TRACER_NAME)
    values = {k: v for k, v in attributes.items() if v is not None}
    with tracer.start_as_current_span(name, attributes=values) as live:
        yield _Live(live)

"""Counters and latency histograms through ``prometheus_client``, one registry per app.

Under gunicorn, ``kgmw serve`` gives its workers a shared directory
(``PROMETHEUS_MULTIPROC_DIR``, see ``use_multiprocess_dir``): each worker writes its
figures there and ``/metrics`` sums every worker's (a ``MultiProcessCollector``), so
any worker answering a scrape reports the whole service.

>>> metrics = Metrics()
>>> metrics.count_request("/v1/answer", "POST", 200, 0.12)
>>> 'kgmw_http_requests_total{method="POST",route="/v1/answer",status="200"} 1.0' in metrics.render()
True
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Histogram, multiprocess, values
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest

from middleware.methods.answer import Usage

# Seconds: answers take from milliseconds (scripted LLM, cached) to a minute (remote LLMs).
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


class Metrics:
    """Request, latency, LLM, SPARQL and error figures of one app, in its own registry
    (or, with ``PROMETHEUS_MULTIPROC_DIR`` set, in that directory's files)."""

    def __init__(self) -> None:
        # no *_created series per label set
        prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry(auto_describe=True)
        self._multiproc_dir = os.environ.get(MULTIPROC_ENV) or None
        r = self.registry
        self._requests = Counter(
            "kgmw_http_requests_total",
            "HTTP requests answered, by route, method and status.",
            ("route", "method", "status"),
            registry=r,
        )
        self._latency = Histogram(
            "kgmw_http_request_duration_seconds",
            "Request latency by route.",
            ("route",),
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self._errors = Counter(
            "kgmw_errors_total", "Errors answered, by error class.", ("error",), registry=r
        )
        self._answers = Counter(
            "kgmw_answers_total", "Answers produced, by method.", ("method",), registry=r
        )
        self._llm_calls = Counter(
            "kgmw_llm_calls_total",
            "LLM calls made for answers, by method.",
            ("method",),
            registry=r,
        )
        self._tokens = Counter(
            "kgmw_llm_tokens_total",
            "LLM tokens spent for answers, by method and kind.",
            ("method", "kind"),
            registry=r,
        )
        self._queries = Counter(
            "kgmw_sparql_queries_total",
            "SPARQL queries run, by method or proxied source.",
            ("via",),
            registry=r,
        )
        # children by label values: a dict read, no lock, once a label set was seen
        self._request_children: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        self._sparql_get: tuple[Any, Any] | None = None
        self._proxy_children: dict[str, Any] = {}

    def count_request(self, route: str, method: str, status: int, seconds: float) -> None:
        key = (route, method, status)
        children = self._request_children.get(key)
        if children is None:
            children = (
                self._requests.labels(route, method, str(status)),
                self._latency.labels(route),
            )
            self._request_children[key] = children
        children[0].inc()
        children[1].observe(seconds)

    def count_sparql_get(self, seconds: float) -> None:
        """A ``GET /sparql`` answered 200 by the fast path: one increment, one observation,
        nothing looked up or allocated."""
        children = self._sparql_get
        if children is None:
            children = self._sparql_get = (
                self._requests.labels("/sparql", "GET", "200"),
                self._latency.labels("/sparql"),
            )
        children[0].inc()
        children[1].observe(seconds)

    def count_error(self, error_class: str) -> None:
        self._errors.labels(error_class).inc()

    def count_usage(self, method: str, usage: Usage) -> None:
        """An answer's LLM calls, tokens and SPARQL queries."""
        self._answers.labels(method).inc()
        self._llm_calls.labels(method).inc(usage.llm_calls)
        self._tokens.labels(method, "prompt").inc(usage.prompt_tokens)
        self._tokens.labels(method, "completion").inc(usage.completion_tokens)
        self._queries.labels(method).inc(usage.sparql_queries)

    def count_proxy_query(self, source: str) -> None:
        child = self._proxy_children.get(source)
        if child is None:
            child = self._proxy_children[source] = self._queries.labels(f"proxy:{source}")
        child.inc()

    def render(self) -> str:
        """All figures in the Prometheus text exposition format (version 0.0.4): this
        app's, or every process's that writes to the multiprocess directory."""
        if self._multiproc_dir is None:
            return generate_latest(self.registry).decode()
        merged = CollectorRegistry()
        multiprocess.MultiProcessCollector(merged, path=self._multiproc_dir)  # type: ignore[no-untyped-call]
        return generate_latest(merged).decode()


def use_multiprocess_dir(path: Path) -> None:
    """Make ``path`` the directory where every process forked from now on writes its
    figures, emptied of an earlier run's (its ``*.db`` files; nothing else is touched).
    ``prometheus_client`` picks its value class when first imported; it is picked again
    here, since ``kgmw serve`` imported it already."""
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.db"):
        old.unlink()
    os.environ[MULTIPROC_ENV] = str(path)
    values.ValueClass = values.get_value_class()  # type: ignore[no-untyped-call]


def mark_process_dead(pid: int) -> None:
    """Drop the live-only figures of worker ``pid`` (gunicorn's ``child_exit`` hook);
    its counters and histograms stay in the sums."""
    path = os.environ.get(MULTIPROC_ENV)
    if path:
        multiprocess.mark_process_dead(pid, path)  # type: ignore[no-untyped-call]

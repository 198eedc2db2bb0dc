"""Counters and latency histograms, rendered in the Prometheus text format.

Each worker process keeps its own figures; under gunicorn a scrape sees the worker
that answered it (label each worker's target, or run one worker per port).

>>> metrics = Metrics()
>>> metrics.count_request("/v1/answer", "POST", 200, 0.12)
>>> 'kgmw_http_requests_total{route="/v1/answer",method="POST",status="200"} 1' in metrics.render()
True
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict

from middleware.methods.answer import Usage

# Seconds: answers take from milliseconds (scripted LLM, cached) to a minute (remote LLMs).
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
Labels = tuple[tuple[str, str], ...]


def _labels(**values: str) -> Labels:
    return tuple(values.items())


def _format(labels: Labels) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Metrics:
    """Thread-safe request, latency, LLM, SPARQL and error figures for one process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, dict[Labels, float]] = defaultdict(lambda: defaultdict(float))
        self._buckets: dict[Labels, list[int]] = {}
        self._sums: dict[Labels, float] = defaultdict(float)
        self._counts: dict[Labels, int] = defaultdict(int)

    def _add(self, name: str, labels: Labels, amount: float = 1.0) -> None:
        self._counters[name][labels] += amount

    def count_request(self, route: str, method: str, status: int, seconds: float) -> None:
        with self._lock:
            self._add(
                "kgmw_http_requests_total", _labels(route=route, method=method, status=str(status))
            )
            key = _labels(route=route)
            buckets = self._buckets.setdefault(key, [0] * len(LATENCY_BUCKETS))
            index = bisect.bisect_left(LATENCY_BUCKETS, seconds)
            for i in range(index, len(LATENCY_BUCKETS)):
                buckets[i] += 1
            self._sums[key] += seconds
            self._counts[key] += 1

    def count_error(self, error_class: str) -> None:
        with self._lock:
            self._add("kgmw_errors_total", _labels(error=error_class))

    def count_usage(self, method: str, usage: Usage) -> None:
        """An answer's LLM calls, tokens and SPARQL queries."""
        with self._lock:
            self._add("kgmw_answers_total", _labels(method=method))
            self._add("kgmw_llm_calls_total", _labels(method=method), usage.llm_calls)
            for kind, count in (
                ("prompt", usage.prompt_tokens),
                ("completion", usage.completion_tokens),
            ):
                self._add("kgmw_llm_tokens_total", _labels(method=method, kind=kind), count)
            self._add("kgmw_sparql_queries_total", _labels(via=method), usage.sparql_queries)

    def count_proxy_query(self, source: str) -> None:
        with self._lock:
            self._add("kgmw_sparql_queries_total", _labels(via=f"proxy:{source}"))

    def render(self) -> str:
        """All figures in the Prometheus text exposition format (version 0.0.4)."""
        help_text = {
            "kgmw_http_requests_total": "HTTP requests answered, by route, method and status.",
            "kgmw_errors_total": "Errors answered, by error class.",
            "kgmw_answers_total": "Answers produced, by method.",
            "kgmw_llm_calls_total": "LLM calls made for answers, by method.",
            "kgmw_llm_tokens_total": "LLM tokens spent for answers, by method and kind.",
            "kgmw_sparql_queries_total": "SPARQL queries run, by method or proxied source.",
        }
        lines: list[str] = []
        with self._lock:
            for name, text in help_text.items():
                lines += [f"# HELP {name} {text}", f"# TYPE {name} counter"]
                for labels, value in sorted(self._counters.get(name, {}).items()):
                    lines.append(f"{name}{_format(labels)} {_number(value)}")
            name = "kgmw_http_request_duration_seconds"
            lines += [f"# HELP {name} Request latency by route.", f"# TYPE {name} histogram"]
            for key, buckets in sorted(self._buckets.items()):
                for bound, count in zip(LATENCY_BUCKETS, buckets, strict=True):
                    lines.append(f"{name}_bucket{_format((*key, ('le', str(bound))))} {count}")
                lines.append(f"{name}_bucket{_format((*key, ('le', '+Inf')))} {self._counts[key]}")
                lines.append(f"{name}_sum{_format(key)} {self._sums[key]:.6f}")
                lines.append(f"{name}_count{_format(key)} {self._counts[key]}")
        return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6f}"

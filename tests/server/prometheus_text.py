"""Read figures from a ``/metrics`` page with prometheus_client's own parser (label
order and number format are the exposition's business, not the tests')."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def figure(text: str, sample: str, **labels: str) -> float | None:
    """The value of ``sample`` with exactly ``labels`` on the page ``text``; None if absent."""
    for family in text_string_to_metric_families(text):
        for found in family.samples:
            if found.name == sample and found.labels == labels:
                return float(found.value)
    return None

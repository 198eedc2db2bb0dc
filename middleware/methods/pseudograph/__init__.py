"""Pseudo-graph generation with atomic knowledge verification (``pg``)."""

from middleware.config.methods import PseudoGraphSettings
from middleware.methods.pseudograph.facts import answer_in_braces, parse_fact_lines
from middleware.methods.pseudograph.method import PseudoGraph

PseudoGraphConfig = PseudoGraphSettings  # the table's old name

__all__ = [
    "PseudoGraph",
    "PseudoGraphConfig",
    "PseudoGraphSettings",
    "answer_in_braces",
    "parse_fact_lines",
]

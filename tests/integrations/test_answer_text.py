"""The text an agent reads: the answer or that the graph does not hold it, the
withheld guess labelled as unsupported, what supports an answer, the evidence."""

from __future__ import annotations

import pytest

from middleware.integrations.answer_text import answer_text
from middleware.kg.sample import sample_store
from middleware.methods.answer import Answer
from middleware.methods.rok import RoK
from tests.cli_helpers import rok_script

QUESTION = "Who directed Titanic?"


@pytest.fixture  # per test: the confidence rule is set per test (tests/conftest.py)
def withheld() -> Answer:
    """RoK's "Ridley Scott": nothing in the evidence joins Titanic to him."""
    answer = RoK(rok_script(answer="Ridley Scott"), sample_store()).run(QUESTION)
    assert not answer.found and answer.guess is not None
    return answer


def test_an_answer_the_graph_does_not_hold_says_so_first(withheld: Answer) -> None:
    lines = answer_text(withheld, 5).splitlines()
    assert lines[0] == "Answer: not found. The graph does not hold the answer."
    assert lines[1] == (
        "Best guess (not supported by the graph): Ridley Scott (confidence 0.20; no evidence "
        "joins an entity the question names to the answer)"
    )
    assert "Supported by:" not in lines and "Evidence:" in lines
    assert not any("Not found in the graph" in line for line in lines)


def test_a_supported_answer_lists_its_support_before_the_evidence() -> None:
    answer = RoK(rok_script(), sample_store()).run(QUESTION)
    lines = answer_text(answer, 5).splitlines()
    assert lines[:2] == ["Answer: James Cameron", "Grounded: yes (confidence 1.00, method rok)"]
    assert lines[2:4] == ["Supported by:", "- Titanic | directed by | James Cameron"]
    assert lines.index("Evidence:") > 3

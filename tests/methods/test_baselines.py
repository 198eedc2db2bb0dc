"""IO and CoT: one call each, the same Answer shape as RoK."""

from __future__ import annotations

import pytest

from middleware.config import Settings
from middleware.errors import BadRequest
from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.baselines import IO, CoT, answer_after_marker
from middleware.methods.registry import build_method
from middleware.serialize import answer_dict


@pytest.fixture(scope="module")
def kg() -> LocalStore:
    store = LocalStore(profile="metaqa", name="films")
    store.load_text("Heat|directed_by|Michael Mann\nHeat|starred_actors|Al Pacino\n", name="kb.txt")
    return store


def test_io_is_one_call_and_grounds_by_label(kg: LocalStore) -> None:
    llm = ScriptedLLM([("Answer:$", " Michael Mann.")])
    answer = IO(llm, kg).run("Who directed Heat?")
    assert answer.answer == "Michael Mann" and answer.method == "io"
    assert answer.usage["llm_calls"] == 1 and len(llm.calls) == 1
    assert "Who directed Heat?" in llm.calls[0].prompt
    assert answer.grounding == "not-applicable" and answer.evidence.paths == []
    assert [(e.label, e.iri) for e in answer.entities] == [
        ("Michael Mann", kg.entity_iri("Michael Mann"))
    ]
    assert set(answer_dict(answer)) >= {
        "answer",
        "entities",
        "evidence",
        "steps",
        "usage",
        "method",
    }


def test_io_without_a_graph() -> None:
    answer = IO(ScriptedLLM(default="Paris")).run("Capital of France?")
    assert answer.answer == "Paris" and answer.entities == [] and answer.sources == []


def test_cot_reads_the_answer_after_the_marker(kg: LocalStore) -> None:
    llm = ScriptedLLM(
        [
            (
                "Reasoning:$",
                "Heat is a 1995 crime film by Michael Mann. So the answer is: Michael Mann",
            )
        ]
    )
    answer = CoT(llm, kg).run("Who directed Heat?")
    assert answer.answer == "Michael Mann" and answer.usage["llm_calls"] == 1
    assert answer.steps[0].parsed["reasoning"].startswith("Heat is a 1995")
    assert answer.warnings == []


def test_cot_without_the_marker_uses_the_last_sentence_and_warns() -> None:
    llm = ScriptedLLM(default="Heat is a crime film. Michael Mann directed it.")
    answer = CoT(llm).run("Who directed Heat?")
    assert answer.answer == "Michael Mann directed it"
    assert any("So the answer is" in w for w in answer.warnings)


def test_choices(kg: LocalStore) -> None:
    llm = ScriptedLLM([("Choice:$", "Al Pacino")])
    answer = IO(llm, kg).run("Who starred in Heat?", choices=["Al Pacino", "Tom Hanks"])
    assert answer.answer == "Al Pacino" and llm.calls[0].kind == "choose"
    # CoT whose answer already names a choice needs no second call.
    llm = ScriptedLLM([("Reasoning:$", "So the answer is: tom hanks")])
    answer = CoT(llm).run("Who starred in Big?", choices=["Al Pacino", "Tom Hanks"])
    assert answer.answer == "Tom Hanks" and answer.usage["llm_calls"] == 1
    llm = ScriptedLLM([("Reasoning:$", "So the answer is: someone"), ("Choice:$", "Al Pacino")])
    answer = CoT(llm).run("Who starred in Heat?", choices=["Al Pacino", "Tom Hanks"])
    assert answer.answer == "Al Pacino" and answer.usage["llm_calls"] == 2


def test_helpers() -> None:
    assert answer_after_marker("no marker here") is None
    assert answer_after_marker("so the answer is Rome. So the answer is: Paris.") == "Paris"
    with pytest.raises(BadRequest, match="unknown method 'nope'"):
        build_method("nope", Settings.load(config_path=None, env={}), ScriptedLLM(), LocalStore())

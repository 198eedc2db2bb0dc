"""Run's step listener: every method reports its steps and LLM calls as they happen."""

from __future__ import annotations

import pytest

from middleware.kg.backends.local import LocalStore
from middleware.llm.ledger import Budget
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.progress import StepEvent
from middleware.methods.rok import RoK
from middleware.methods.run import Run


@pytest.fixture(scope="module")
def films() -> LocalStore:
    kg = LocalStore(profile="metaqa", name="films")
    kg.load_text("Titanic|directed_by|James Cameron\nTitanic|release_year|1997\n", name="kb.txt")
    return kg


def script() -> ScriptedLLM:
    return ScriptedLLM(
        [("Key entities:$", "Titanic"), ("Useful facts:$", "1"), ("Answer:$", "James Cameron")],
        default="Titanic is by James Cameron.",
    )


def test_a_method_reports_each_step_start_and_end_in_order(films: LocalStore) -> None:
    events: list[StepEvent] = []
    answer = RoK(script(), films).run(
        "Who directed Titanic?", budget=Budget(max_calls=9), listener=events.append
    )
    starts = [e.step for e in events if e.kind == "start"]
    ends = [e.step for e in events if e.kind == "end"]
    assert starts and sorted(starts) == sorted(ends)
    assert ends == [step.name for step in answer.steps]  # one end per recorded step
    for start, end in zip(
        (e for e in events if e.kind == "start"),
        (e for e in events if e.kind == "end"),
        strict=True,
    ):
        assert start.index == end.index
    calls = [e for e in events if e.kind == "llm"]
    assert [c.call for c in calls] == list(range(1, answer.usage.llm_calls + 1))
    assert {c.most for c in calls} == {9}
    finished = [e for e in events if e.kind == "end"]
    assert sum(e.llm_calls for e in finished) == answer.usage.llm_calls


def test_an_llm_event_names_the_step_it_belongs_to() -> None:
    events: list[StepEvent] = []
    run = Run("Who directed Heat?", "demo", ScriptedLLM(default="Michael Mann"))
    run.listener = events.append
    with run.step("answer") as step:
        run.complete(step, [{"role": "user", "content": "Who directed Heat?"}])
    assert [(e.kind, e.step) for e in events] == [
        ("start", "answer"),
        ("llm", "answer"),
        ("end", "answer"),
    ]
    assert events[1].most is None  # no budget: no upper bound to show
    assert events[2].as_dict()["llm_calls"] == 1


def test_a_step_that_fails_still_reports_its_end() -> None:
    events: list[StepEvent] = []
    run = Run("q", "demo", ScriptedLLM(), listener=events.append)
    with pytest.raises(RuntimeError), run.step("link"):
        raise RuntimeError("boom")
    assert [(e.kind, e.failed) for e in events] == [("start", False), ("end", True)]

"""The final answer's prompt holds a bounded amount of graph text, whatever the method
found: a hub's planned walks once made a `rok+plan` prompt of 10,996 tokens, over the
embedded model's 8,192, and the question failed. The facts shown are the first ones (the
planned, best first); the step says how many were left out."""

from __future__ import annotations

from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import Evidence
from middleware.methods.run import AnswerPolicy, PriorEvidence, Run
from middleware.methods.steps import PROMPT_FACT_CHARS, final_answer, within_budget


def test_a_long_list_of_facts_is_cut_to_the_prompt_budget_and_the_cut_is_noted() -> None:
    llm = ScriptedLLM(default="Michael Mann")
    run = Run("Who directed Heat?", "demo", llm, policy=AnswerPolicy(graph_only=False))
    facts = [f"Film {i:04d} | directed by | Director {i:04d} of a long name" for i in range(2000)]
    final_answer(run, facts, Evidence())
    prompt = llm.calls[0].prompt
    shown = [f for f in facts if f in prompt]
    assert shown == facts[: len(shown)], "the first facts are kept, in order"
    assert sum(len(f) + 1 for f in shown) <= PROMPT_FACT_CHARS
    assert len(shown) >= PROMPT_FACT_CHARS // 60 - 1, "the budget is used"
    notes = [n for step in run.steps for n in step.notes]
    assert any(f"{2000 - len(shown):,} of 2,000 facts left out" in n for n in notes), notes


def test_planned_facts_come_first_and_are_kept_before_the_methods_own() -> None:
    llm = ScriptedLLM(default="Michael Mann")
    run = Run("Who directed Heat?", "demo", llm, policy=AnswerPolicy(graph_only=False))
    planned = [f"Heat | directed by | Michael Mann {i:05d} " + "x" * 80 for i in range(400)]
    prior = PriorEvidence(planned, Evidence(), ["Michael Mann"])
    final_answer(run, ["Heat | starred | Al Pacino"], Evidence(), prior=prior)
    prompt = llm.calls[0].prompt
    assert planned[0] in prompt and "Al Pacino" not in prompt


def test_a_short_list_is_shown_whole_without_a_note() -> None:
    llm = ScriptedLLM(default="Michael Mann")
    run = Run("Who directed Heat?", "demo", llm, policy=AnswerPolicy(graph_only=False))
    final_answer(run, ["Heat | directed by | Michael Mann"], Evidence())
    assert "Heat | directed by | Michael Mann" in llm.calls[0].prompt
    assert not [n for step in run.steps for n in step.notes]


def test_a_first_fact_longer_than_the_budget_is_shown_cut() -> None:
    shown, left_out = within_budget(["x" * (PROMPT_FACT_CHARS + 50), "short"])
    assert shown == ["x" * PROMPT_FACT_CHARS] and left_out == 1
    exact = ["y" * PROMPT_FACT_CHARS]
    assert within_budget(exact) == (exact, 0)

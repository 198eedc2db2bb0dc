"""Baselines without graph evidence, in the same ``Answer`` shape as the methods.

IO asks the question alone in one call. CoT asks for step-by-step reasoning and reads
the answer after "So the answer is:". With choices, both end in a constrained choice.
When a graph is given, answer entities are still grounded to it (by label), so
comparisons of grounding are like for like; the evidence stays empty.

>>> from middleware.llm.scripted import ScriptedLLM
>>> llm = ScriptedLLM(default="Heat was directed by Michael Mann. So the answer is: Michael Mann")
>>> CoT(llm).run("Who directed Heat?").answer
'Michael Mann'
"""

from __future__ import annotations

import re

from middleware.llm.options import match_option
from middleware.llm.templates import render
from middleware.methods.base import Answer, AnswerEntity, MethodBase, Run, clean_answer
from middleware.methods.grounding import ground_answer
from middleware.text.linking import EntityLinker

_MARKER = re.compile(r"so the answer is\s*:?", re.IGNORECASE)


def answer_after_marker(text: str) -> str | None:
    """What follows the last "So the answer is:", or None when the marker is missing.

    >>> answer_after_marker("A then B. So the answer is: Paris.")
    'Paris'
    """
    found = list(_MARKER.finditer(text))
    if not found:
        return None
    return clean_answer(text[found[-1].end() :]) or None


class _Baseline(MethodBase):
    name = "baseline"

    def answer(self, run: Run) -> Answer:
        answer = self._answer_text(run)
        entities: list[AnswerEntity] = []
        if run.graphs and answer:
            with run.step("ground") as step:
                for graph in run.graphs:
                    entities += ground_answer(answer, run.question, {}, linker=EntityLinker(graph))
                step.parsed = [e.to_dict() for e in entities]
        if not answer:
            run.warn("the model gave an empty answer")
        return run.finish(answer, grounding="not-applicable", entities=entities)

    def _answer_text(self, run: Run) -> str:
        raise NotImplementedError

    @staticmethod
    def _choose(run: Run, knowledge: list[str]) -> str:
        assert run.choices is not None
        with run.step("choose") as step:
            prompt = render("choice_answer", question=run.question, facts=knowledge)
            step.parsed = run.choose(step, prompt, run.choices).option
        return str(step.parsed)


class IO(_Baseline):
    """The question alone, one LLM call."""

    name = "io"

    def _answer_text(self, run: Run) -> str:
        if run.choices:
            return self._choose(run, [])
        with run.step("answer") as step:
            step.parsed = clean_answer(
                run.complete(step, render("io_answer", question=run.question)).text
            )
        return str(step.parsed)


class CoT(_Baseline):
    """Step-by-step reasoning, then the answer; a second call only to pick a choice."""

    name = "cot"

    def _answer_text(self, run: Run) -> str:
        with run.step("reason") as step:
            reply = run.complete(step, render("cot_answer", question=run.question)).text
            answer = answer_after_marker(reply)
            if answer is None:
                run.warn(
                    'the reasoning has no "So the answer is:"; its last sentence is used', step
                )
                sentences = [s for s in re.split(r"(?<=[.!?])\s+", reply.strip()) if s]
                answer = clean_answer(sentences[-1]) if sentences else ""
            step.parsed = {"reasoning": " ".join(reply.split()), "answer": answer}
        if not run.choices:
            return answer
        picked = match_option(answer, run.choices)
        if picked is not None:
            return run.choices[picked]
        return self._choose(run, [" ".join(reply.split())])

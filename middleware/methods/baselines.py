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
from middleware.llm.prompt_templates import render
from middleware.methods.answer import Answer, Evidence
from middleware.methods.method import MethodBase
from middleware.methods.run import Run
from middleware.methods.steps import Candidates, clean_answer, final_answer, finish, ground

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


def last_sentence(text: str) -> str:
    """The reasoning's last sentence as an answer, for a reply without the marker.

    >>> last_sentence("Heat is a film. Michael Mann directed it.")
    'Michael Mann directed it'
    """
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]
    return clean_answer(sentences[-1]) if sentences else ""


def cot_question(run: Run) -> str:
    """The question as the reasoning prompt shows it: with choices, they follow it.

    >>> from middleware.llm.scripted import ScriptedLLM
    >>> cot_question(Run("Who directed Heat?", "cot", ScriptedLLM(), choices=["Michael Mann", "Al Pacino"]))
    'Who directed Heat? (choices: Michael Mann; Al Pacino)'
    """
    if not run.choices:
        return run.question
    return f"{run.question} (choices: {'; '.join(run.choices)})"


class ModelOnlyBaseline(MethodBase):
    """What the baselines share (``io``, ``cot``, ``sc``): the model answers alone, and
    the answer is linked to the graphs afterwards, never grounded in evidence."""

    name = "baseline"
    graph_method = False

    def answer(self, run: Run) -> Answer:
        text = self._answer_text(run)
        entities = ground(run, text, [Candidates(g, self.linker(g)) for g in run.graphs])
        return finish(run, text, entities=entities, evidence=Evidence(), grounding="not-applicable")

    def _answer_text(self, run: Run) -> str:
        raise NotImplementedError


class IO(ModelOnlyBaseline):
    """The question alone, one LLM call."""

    name = "io"

    def _answer_text(self, run: Run) -> str:
        return final_answer(run, [], Evidence(), prompt="io_answer")


class CoT(ModelOnlyBaseline):
    """Step-by-step reasoning, then the answer; a second call only to pick a choice."""

    name = "cot"

    def _answer_text(self, run: Run) -> str:
        with run.step("reason") as step:
            reply = run.complete(step, render("cot_answer", question=cot_question(run))).text
            answer = answer_after_marker(reply)
            if answer is None:
                run.warn(
                    'the reasoning has no "So the answer is:"; its last sentence is used', step
                )
                answer = last_sentence(reply)
            step.parsed = {"reasoning": " ".join(reply.split()), "answer": answer}
            if not answer and not run.choices:
                run.warn("the model gave an empty answer", step)
        if not run.choices:
            return answer
        picked = match_option(answer, run.choices)
        if picked is not None:
            return run.choices[picked]
        return final_answer(run, [" ".join(reply.split())], Evidence())

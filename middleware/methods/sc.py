"""Self-consistency baseline (``sc``): k sampled chains of thought, then a majority vote.

Sample i (from 0) asks the CoT prompt (``cot_answer``) at ``sc_temperature`` with seed
``sc_seed + i``, one LLM call in its own step ``sample``; its answer is what follows "So
the answer is:" (else its last sentence). Answers are counted under a normal form
(folded, articles dropped, a list's items in any order); the most frequent wins, a tie
going to the earliest sample, and it is shown as that sample wrote it. With choices,
each sample's answer is matched to a choice and the vote is among choices; when no
sample names one, one constrained call over the reasonings (step ``answer``) picks.
Step ``vote`` keeps every sample's answer and the counts. As with CoT the evidence stays
empty and the answer is linked to the graph by label; ``answer_graph_only`` does not
apply to a baseline.

The k calls are checked against the call budget before the first is made, so a budget
too small for them fails at once (``BudgetExceeded``) instead of after spending it.

>>> from middleware.llm.scripted import ScriptedLLM
>>> replies = iter(["So the answer is: Paris", "So the answer is: Lyon", "So the answer is: paris."])
>>> llm = ScriptedLLM(default=lambda prompt: next(replies))
>>> answer = SelfConsistency(llm, config=SCSettings(samples=3)).run("Capital of France?")
>>> answer.answer, answer.usage.llm_calls, answer.steps[-1].parsed["votes"]
('Paris', 3, {'Paris': 2, 'Lyon': 1})
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from middleware.config.methods import SCSettings
from middleware.errors import BudgetExceeded
from middleware.kg.base import KnowledgeGraph
from middleware.llm.base import LLM
from middleware.llm.options import match_option
from middleware.llm.prompt_templates import render
from middleware.methods.answer import Evidence
from middleware.methods.baselines import (
    ModelOnlyBaseline,
    answer_after_marker,
    cot_question,
    last_sentence,
)
from middleware.methods.run import Run
from middleware.methods.steps import final_answer
from middleware.text.folding import fold

_ITEMS = re.compile(r"\s*(?:[,;]|\band\b|&)\s*", re.IGNORECASE)
_ARTICLES = frozenset({"a", "an", "the"})


def vote_key(text: str) -> str:
    """The form an answer is counted under: folded, articles dropped, items sorted.

    >>> vote_key("The Matrix."), vote_key("Bill Murray, Scarlett Johansson")
    ('matrix', 'bill murray | scarlett johansson')
    >>> vote_key("scarlett johansson and Bill Murray") == vote_key("Bill Murray, Scarlett Johansson")
    True
    """
    items = set()
    for part in _ITEMS.split(text):
        words = [w for w in fold(part).split() if w not in _ARTICLES]
        if words:
            items.add(" ".join(words))
    return " | ".join(sorted(items))


def match_choice(answer: str, choices: Sequence[str]) -> int | None:
    """The choice ``answer`` names: as ``match_option`` reads it, else the one choice
    with the same vote key.

    >>> match_choice("the Matrix", ["Matrix", "Heat"]), match_choice("Alien", ["Heat"])
    (0, None)
    """
    found = match_option(answer, choices)
    if found is not None or not answer:
        return found
    key = vote_key(answer)
    same = [i for i, choice in enumerate(choices) if key and vote_key(choice) == key]
    return same[0] if len(same) == 1 else None


@dataclass(frozen=True)
class Sample:
    """One chain of thought: its answer, its reasoning on one line, whether it had the
    marker, and the choice it names (with choices)."""

    answer: str
    reasoning: str
    marked: bool
    choice: int | None = None


def majority(keys: Sequence[str | None]) -> tuple[dict[str, int], dict[str, int]]:
    """Votes per key, most first and ties in order of first appearance, and each key's
    first sample; None is no vote.

    >>> majority(["b", None, "a", "a", "b"])
    ({'b': 2, 'a': 2}, {'b': 0, 'a': 2})
    """
    first: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key is not None:
            first.setdefault(key, i)
    counts = Counter(key for key in keys if key is not None)
    ranked = sorted(first, key=lambda key: (-counts[key], first[key]))
    return {key: counts[key] for key in ranked}, first


class SelfConsistency(ModelOnlyBaseline):
    """k sampled CoT answers (``sc_samples`` LLM calls), majority vote; any number of sources."""

    name = "sc"

    def __init__(
        self,
        llm: LLM,
        graph: KnowledgeGraph | None = None,
        *,
        config: SCSettings | None = None,
        **shared: Any,
    ) -> None:
        super().__init__(llm, graph, **shared)
        self.config = config or SCSettings()

    def _answer_text(self, run: Run) -> str:
        self._check_budget(run)
        samples = [self._sample(run, i) for i in range(self.config.samples)]
        return self._vote(run, samples)

    def _check_budget(self, run: Run) -> None:
        budget, ledger = run.session.budget, run.session.ledger
        wanted = self.config.samples
        if budget.max_calls is not None and len(ledger) + wanted > budget.max_calls:
            left = max(0, budget.max_calls - len(ledger))
            raise BudgetExceeded(
                f"sc samples {wanted} chains of thought, one LLM call each, but the budget "
                f"allows {left} more",
                hint="raise max_calls or lower sc_samples",
                ledger=ledger,
            )

    def _sample(self, run: Run, index: int) -> Sample:
        temperature, seed = self.config.temperature, self.config.seed + index
        with run.step("sample") as step:
            prompt = render("cot_answer", question=cot_question(run))
            reply = run.complete(step, prompt, temperature=temperature, seed=seed).text
            answer = answer_after_marker(reply)
            marked = answer is not None
            if answer is None:
                answer = last_sentence(reply)
                step.notes.append('no "So the answer is:"; the last sentence is used')
            choice = match_choice(answer, run.choices) if run.choices else None
            sample = Sample(answer, " ".join(reply.split()), marked, choice)
            step.parsed = {
                "sample": index + 1,
                "temperature": temperature,
                "seed": seed,
                "reasoning": sample.reasoning,
                "answer": answer,
            }
            if run.choices:
                step.parsed["choice"] = None if choice is None else run.choices[choice]
        return sample

    def _vote(self, run: Run, samples: list[Sample]) -> str:
        choices = run.choices
        with run.step("vote") as step:
            unmarked = [str(i + 1) for i, s in enumerate(samples) if not s.marked]
            if unmarked:
                run.warn(
                    f'{len(unmarked)} of {len(samples)} samples have no "So the answer is:" '
                    f"(samples {', '.join(unmarked)}); their last sentences are used",
                    step,
                )
            if choices:  # choices differ from each other: a choice is its own key
                keys = [None if s.choice is None else choices[s.choice] for s in samples]
            else:
                keys = [vote_key(s.answer) or None for s in samples]
            counts, first = majority(keys)
            # a key is shown as its earliest sample wrote it (with choices: the choice)
            shown = {key: key if choices else samples[first[key]].answer for key in counts}
            votes = {shown[key]: n for key, n in counts.items()}
            winner = shown[next(iter(counts))] if counts else None
            step.parsed = {
                "answers": [s.answer for s in samples],
                "votes": votes,
                "answer": winner,
                "share": round(max(counts.values()) / len(samples), 4) if counts else 0.0,
            }
            if winner is None and not choices:
                run.warn("the model gave an empty answer in every sample", step)
            if winner is None and choices:
                step.notes.append("no sample named a choice; one constrained call picks")
        if winner is not None:
            return winner
        if not choices:
            return ""
        reasonings = list(dict.fromkeys(s.reasoning for s in samples if s.reasoning))
        return final_answer(run, reasonings, Evidence())

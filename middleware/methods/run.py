"""One question answered by one method: its LLM session, its steps, its costs.

A method is a few named steps. ``Run`` times each step and charges it what it spent
(LLM calls and tokens from the session's ledger, SPARQL queries the calling thread ran
on the graphs), keeps its prompt, raw output and parsed result, and totals the
``Usage``. The ``AnswerPolicy`` says what the shared final stage may do. A
``listener`` hears each step start and end and each LLM call as it happens
(``methods/progress.py``).

>>> from middleware.llm.scripted import ScriptedLLM
>>> run = Run("Who directed Heat?", "demo", ScriptedLLM(default="Michael Mann"))
>>> with run.step("answer") as step:
...     text = run.complete(step, [{"role": "user", "content": "Who directed Heat?"}]).text
>>> text, run.usage().llm_calls, run.steps[0].name
('Michael Mann', 1, 'answer')
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from middleware.config.areas import AnswerSettings
from middleware.errors import BadRequest
from middleware.kg.base import KnowledgeGraph
from middleware.llm.base import LLM, Choice, Completion, Message
from middleware.llm.ledger import Budget, Ledger, LLMCall
from middleware.llm.prompt_templates import Prompt, flatten
from middleware.llm.session import LLMSession
from middleware.methods.answer import Evidence, QuestionEntity, Step, StepUsage, Usage
from middleware.methods.progress import StepEvent, StepListener
from middleware.planning.relation_fit import RelationFit
from middleware.support.tracing import span
from middleware.text.link_strength import weak_link

MAX_QUESTION_CHARS = 2000
MAX_CHOICES = 50
_DEFAULTS = AnswerSettings()


@dataclass(frozen=True)
class AnswerPolicy:
    """What the shared final stage may answer (from the ``answer_*`` settings)."""

    graph_only: bool = _DEFAULTS.answer_graph_only  # unsupported: say not found
    min_confidence: float = _DEFAULTS.answer_min_confidence  # below it: say not found
    allow_ungrounded: bool = False  # every source failed: answer without evidence
    support_hops: int = _DEFAULTS.answer_support_hops  # longest chain that supports
    calibration: str | None = None  # a calibration file; None: the shipped one
    relation_gap: bool = False  # measure the relation gap even if the calibration ignores it
    foreign_margin: float = _DEFAULTS.answer_foreign_margin  # asks for a relation not held

    @classmethod
    def from_settings(cls, settings: AnswerSettings) -> AnswerPolicy:
        return cls(
            graph_only=settings.answer_graph_only,
            min_confidence=settings.answer_min_confidence,
            allow_ungrounded=settings.allow_ungrounded,
            support_hops=settings.answer_support_hops,
            calibration=settings.answer_calibration,
            relation_gap=settings.answer_relation_gap,
            foreign_margin=settings.answer_foreign_margin,
        )


def check_question(question: str, choices: Sequence[str] | None) -> tuple[str, list[str] | None]:
    """The question stripped, and the choices as a list; bad input is a BadRequest."""
    if not isinstance(question, str) or not question.strip():
        raise BadRequest("the question is empty", hint="ask a question in words")
    text = " ".join(question.split())
    if len(text) > MAX_QUESTION_CHARS:
        raise BadRequest(
            f"the question has {len(text)} characters, more than {MAX_QUESTION_CHARS}",
            hint="shorten it to the question itself",
        )
    if choices is None:
        return text, None
    options = [" ".join(str(c).split()) for c in choices]
    if not options or any(not o for o in options):
        raise BadRequest("choices must be a non-empty list of non-empty texts")
    if len(options) > MAX_CHOICES:
        raise BadRequest(f"{len(options)} choices given, at most {MAX_CHOICES} are allowed")
    if len(set(options)) != len(options):
        raise BadRequest("choices must differ from each other")
    return text, options


def _prompt_text(prompt: Prompt | Sequence[Message]) -> str:
    return flatten(prompt.messages if isinstance(prompt, Prompt) else list(prompt))


def _query_count(graphs: Sequence[KnowledgeGraph]) -> int:
    """Queries the calling thread has run on ``graphs`` (a run stays in one thread)."""
    return sum(g.thread_query_count for g in graphs)


def _llm_totals(calls: list[LLMCall]) -> tuple[int, int, int]:
    return (
        len(calls),
        sum(c.prompt_tokens for c in calls),
        sum(c.completion_tokens for c in calls),
    )


@dataclass(frozen=True)
class PriorEvidence:
    """Evidence found before the method ran (planned paths): the shared final stages
    put its facts first, ground answers in its entities too and keep it in the Answer.
    With ``answers`` (the planned entities' names), the final answer is a constrained
    choice among them, the facts in the prompt."""

    facts: list[str]
    evidence: Evidence
    answers: list[str] = field(default_factory=list)  # names the answer is chosen from
    support: float | None = None  # the best plan's support (vote share or softmax score)
    answer_iris: list[str] = field(default_factory=list)  # the planned answers' entities


class Run:
    """One question answered by one method: its session, its steps, its timing."""

    def __init__(
        self,
        question: str,
        method: str,
        llm: LLM,
        *,
        graphs: Sequence[KnowledgeGraph] = (),
        budget: Budget | None = None,
        choices: list[str] | None = None,
        policy: AnswerPolicy | None = None,
        listener: StepListener | None = None,
    ) -> None:
        self.question = question
        self.method = method
        self.graphs = list(graphs)
        self.choices = choices
        self.policy = policy or AnswerPolicy()
        self.session = LLMSession(llm, ledger=Ledger(), budget=budget)
        self.steps: list[Step] = []
        self.warnings: list[str] = []
        self.listener = listener
        self._step_index = 0
        self._open: list[int] = []  # indices of the steps now running, innermost last
        self._started = time.perf_counter()
        self._queries_at_start = _query_count(self.graphs)
        self.asked: dict[str, QuestionEntity] = {}  # entities the question names, by IRI
        self.relation_fits: dict[str, RelationFit] = {}  # per source, where the method has one
        self.plan_mode = ""  # the planner's mode, where a plan was made
        self.plan_fallback = False  # the planner's best-ranked path reached nothing
        # per source planned: how much the question asks for paths the plan's topic lacks
        self.plan_unheld_by: dict[str, float] = {}

    @property
    def profile(self) -> str:
        """The source profile every graph of the run has ("" when they differ)."""
        names = {g.profile.name for g in self.graphs}
        return names.pop() if len(names) == 1 else ""

    @contextmanager
    def step(self, name: str) -> Iterator[Step]:
        """Time a stage and charge it the LLM calls and SPARQL queries made inside it."""
        record = Step(name)
        index = self._step_index
        self._step_index += 1
        calls_before = len(self.session.ledger)
        queries_before = _query_count(self.graphs)
        self._tell(StepEvent("start", name, index))
        self._open.append(index)
        started = time.perf_counter()
        failed = True
        try:
            with span("kgmw.step", method=self.method, step=name, index=index) as traced:
                yield record
                traced.set(llm_calls=len(self.session.ledger) - calls_before)
            failed = False
        finally:
            record.seconds = time.perf_counter() - started
            calls = self.session.ledger.calls[calls_before:]
            record.llm_calls, record.prompt_tokens, record.completion_tokens = _llm_totals(calls)
            record.sparql_queries = _query_count(self.graphs) - queries_before
            self.steps.append(record)
            self._open.pop()
            end = StepEvent(
                "end",
                name,
                index,
                seconds=round(record.seconds, 4),
                llm_calls=record.llm_calls,
                sparql_queries=record.sparql_queries,
                failed=failed,
            )
            self._tell(end)

    def _tell(self, event: StepEvent) -> None:
        if self.listener is not None:
            self.listener(event)

    def _tell_call(self, step: Step) -> None:
        """An ``llm`` event for the call ``step`` is about to make."""
        if self.listener is not None:
            index = self._open[-1] if self._open else -1
            call = len(self.session.ledger) + 1
            most = self.session.budget.max_calls
            self._tell(StepEvent("llm", step.name, index, call=call, most=most))

    def complete(
        self,
        step: Step,
        prompt: Prompt | Sequence[Message],
        *,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Completion:
        """One LLM completion for ``step``; its prompt and raw reply are recorded."""
        step.prompt = _prompt_text(prompt)
        self._tell_call(step)
        completion = self.session.complete(step.name, prompt, temperature=temperature, seed=seed)
        step.raw = completion.text
        return completion

    def choose(
        self,
        step: Step,
        prompt: Prompt | Sequence[Message],
        options: list[str],
        *,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Choice:
        """One constrained LLM choice for ``step``."""
        step.prompt = _prompt_text(prompt)
        self._tell_call(step)
        choice = self.session.choose(step.name, prompt, options, temperature=temperature, seed=seed)
        step.raw = choice.completion.text
        return choice

    def ask(
        self,
        iri: str,
        *,
        span: str,
        match: str,
        label: str | None = None,
        source: str | None = None,
        step: Step | None = None,
    ) -> QuestionEntity:
        """Record an entity the question names (the start of any support for the
        answer); a weak link (fuzzy, or part of a longer name) is noted on ``step``."""
        known = self.asked.get(iri)
        weak = weak_link(self.question, span, match) if span else None
        if known is not None and (known.weak is None or weak is not None):
            return known
        entity = QuestionEntity(iri, label, span, match, source, weak)
        self.asked[iri] = entity
        if weak is not None and step is not None:
            step.notes.append(f"weak link to {label or iri}: {weak}")
        return entity

    def warn(self, message: str, step: Step | None = None) -> None:
        """A degradation the user must see: in ``warnings`` and in the step's notes."""
        self.warnings.append(message)
        if step is not None:
            step.notes.append(message)

    def usage(self) -> Usage:
        summary = self.session.ledger.summary()
        by_step: dict[str, StepUsage] = {}
        for step in self.steps:
            entry = by_step.setdefault(step.name, StepUsage())
            entry.llm_calls += step.llm_calls
            entry.prompt_tokens += step.prompt_tokens
            entry.completion_tokens += step.completion_tokens
            entry.sparql_queries += step.sparql_queries
            entry.seconds = round(entry.seconds + step.seconds, 4)
        return Usage(
            llm_calls=summary["llm_calls"],
            prompt_tokens=summary["prompt_tokens"],
            completion_tokens=summary["completion_tokens"],
            cache_hits=summary["cache_hits"],
            llm_seconds=summary["llm_seconds"],
            sparql_queries=_query_count(self.graphs) - self._queries_at_start,
            seconds=round(time.perf_counter() - self._started, 4),
            by_step=by_step,
        )

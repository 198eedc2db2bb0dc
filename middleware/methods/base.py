"""What every method shares: the ``Answer`` it returns and the ``Run`` that records it.

A method is a few named steps. ``Run`` times each step and counts what it spent (LLM
calls and tokens from the session's ledger, SPARQL queries from the graphs), keeps
its prompt, raw output and parsed result, and assembles the ``Answer``.

>>> from middleware.llm.scripted import ScriptedLLM
>>> run = Run("Who directed Heat?", "demo", ScriptedLLM(default="Michael Mann"))
>>> with run.step("answer") as step:
...     text = run.complete(step, [{"role": "user", "content": "Who directed Heat?"}]).text
>>> answer = run.finish(text, grounding="none")
>>> answer.answer, answer.usage["llm_calls"], answer.steps[0].name
('Michael Mann', 1, 'answer')
"""

from __future__ import annotations

import json
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from middleware.errors import BadRequest
from middleware.kg.base import KnowledgeGraph, Path, Triple
from middleware.llm.base import LLM, Choice, Completion, Message
from middleware.llm.ledger import Budget, Ledger, LLMCall
from middleware.llm.session import LLMSession
from middleware.llm.templates import Prompt, flatten
from middleware.serialize import path_json, triple_json

MAX_QUESTION_CHARS = 2000
MAX_CHOICES = 50
Grounding = Literal["paths", "neighbourhood", "none", "not-applicable"]


@dataclass(frozen=True)
class AnswerEntity:
    """A graph entity the answer names."""

    iri: str
    label: str | None
    source: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"iri": self.iri, "label": self.label, "source": self.source}


@dataclass(frozen=True)
class EvidencePath:
    """A path the answer rests on, as text and as triples with source IRIs."""

    path: Path
    text: str
    score: float | None = None
    key_entities: int | None = None

    def to_dict(self) -> dict[str, Any]:
        body = path_json(self.path, self.text)
        body["source"] = self.path.hops[0].triple.source if self.path.hops else None
        if self.score is not None:
            body["score"] = round(self.score, 6)
        if self.key_entities is not None:
            body["key_entities"] = self.key_entities
        return body


@dataclass(frozen=True)
class EvidenceTriple:
    """A single triple the answer rests on; ``role`` says why it is there."""

    triple: Triple
    text: str
    role: str = "fact"

    def to_dict(self) -> dict[str, Any]:
        body = triple_json(self.triple, self.text)
        body["role"] = self.role
        return body


@dataclass
class Evidence:
    paths: list[EvidencePath] = field(default_factory=list)
    triples: list[EvidenceTriple] = field(default_factory=list)

    def all_triples(self) -> list[Triple]:
        """Every triple of the evidence once, path triples first."""
        seen: dict[tuple[str, str, str], Triple] = {}
        for path in self.paths:
            for hop in path.path.hops:
                seen.setdefault(hop.triple.key(), hop.triple)
        for item in self.triples:
            seen.setdefault(item.triple.key(), item.triple)
        return list(seen.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "paths": [p.to_dict() for p in self.paths],
            "triples": [t.to_dict() for t in self.triples],
        }


@dataclass
class Step:
    """What one stage did and spent."""

    name: str
    seconds: float = 0.0
    prompt: str | None = None
    raw: str | None = None
    parsed: Any = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    sparql_queries: int = 0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seconds": round(self.seconds, 4),
            "prompt": self.prompt,
            "raw": self.raw,
            "parsed": self.parsed,
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "sparql_queries": self.sparql_queries,
            "notes": list(self.notes),
        }


@dataclass
class Answer:
    """A method's answer with its evidence, the record of its steps, and its usage."""

    question: str
    answer: str
    method: str
    entities: list[AnswerEntity] = field(default_factory=list)
    evidence: Evidence = field(default_factory=Evidence)
    steps: list[Step] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    grounding: Grounding = "none"
    warnings: list[str] = field(default_factory=list)
    choices: list[str] | None = None
    sources: list[str] = field(default_factory=list)

    @property
    def grounded(self) -> bool:
        return self.grounding in ("paths", "neighbourhood")

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "method": self.method,
            "grounded": self.grounded,
            "grounding": self.grounding,
            "entities": [e.to_dict() for e in self.entities],
            "evidence": self.evidence.to_dict(),
            "steps": [s.to_dict() for s in self.steps],
            "usage": self.usage,
            "warnings": list(self.warnings),
            "choices": self.choices,
            "sources": list(self.sources),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    def to_turtle(self) -> str:
        """The answer as RDF Turtle in the kgmw answer vocabulary (PROV-O aligned)."""
        from middleware.methods.answer_rdf import answer_turtle

        return answer_turtle(self)


class Method(Protocol):
    """A question-answering method over zero or more graphs."""

    name: str

    def run(
        self,
        question: str,
        *,
        choices: Sequence[str] | None = None,
        sources: Sequence[KnowledgeGraph] | None = None,
        budget: Budget | None = None,
    ) -> Answer: ...


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


def clean_answer(text: str) -> str:
    """The model's answer line without a leading label or trailing filler.

    >>> clean_answer("  Answer: James Cameron.  ")
    'James Cameron'
    """
    line = text.strip().splitlines()[0] if text.strip() else ""
    line = re.sub(r"^(the )?answer( is)?\s*[:\-]\s*", "", line.strip(), flags=re.IGNORECASE)
    return line.strip().rstrip(".").strip()


def _prompt_text(prompt: Prompt | Sequence[Message]) -> str:
    return flatten(prompt.messages if isinstance(prompt, Prompt) else list(prompt))


def _query_count(graphs: Sequence[KnowledgeGraph]) -> int:
    """Queries the calling thread has run on ``graphs`` (a run stays in one thread)."""
    return sum(int(getattr(g, "thread_query_count", getattr(g, "query_count", 0))) for g in graphs)


def _llm_totals(calls: list[LLMCall]) -> tuple[int, int, int]:
    return (
        len(calls),
        sum(c.prompt_tokens for c in calls),
        sum(c.completion_tokens for c in calls),
    )


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
    ) -> None:
        self.question = question
        self.method = method
        self.graphs = list(graphs)
        self.choices = choices
        self.session = LLMSession(llm, ledger=Ledger(), budget=budget)
        self.steps: list[Step] = []
        self.warnings: list[str] = []
        self._started = time.perf_counter()
        self._queries_at_start = _query_count(self.graphs)

    @contextmanager
    def step(self, name: str) -> Iterator[Step]:
        """Time a stage and charge it the LLM calls and SPARQL queries made inside it."""
        record = Step(name)
        calls_before = len(self.session.ledger)
        queries_before = _query_count(self.graphs)
        started = time.perf_counter()
        try:
            yield record
        finally:
            record.seconds = time.perf_counter() - started
            calls = self.session.ledger.calls[calls_before:]
            record.llm_calls, record.prompt_tokens, record.completion_tokens = _llm_totals(calls)
            record.sparql_queries = _query_count(self.graphs) - queries_before
            self.steps.append(record)

    def complete(self, step: Step, prompt: Prompt | Sequence[Message]) -> Completion:
        """One LLM completion for ``step``; its prompt and raw reply are recorded."""
        step.prompt = _prompt_text(prompt)
        completion = self.session.complete(step.name, prompt)
        step.raw = completion.text
        return completion

    def choose(self, step: Step, prompt: Prompt | Sequence[Message], options: list[str]) -> Choice:
        """One constrained LLM choice for ``step``."""
        step.prompt = _prompt_text(prompt)
        choice = self.session.choose(step.name, prompt, options)
        step.raw = choice.completion.text
        return choice

    def warn(self, message: str, step: Step | None = None) -> None:
        """A degradation the user must see: in ``warnings`` and in the step's notes."""
        self.warnings.append(message)
        if step is not None:
            step.notes.append(message)

    def usage(self) -> dict[str, Any]:
        summary = self.session.ledger.summary()
        by_step: dict[str, dict[str, Any]] = {}
        for step in self.steps:
            entry = by_step.setdefault(
                step.name,
                {
                    "llm_calls": 0,
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "sparql_queries": 0,
                    "seconds": 0.0,
                },
            )
            entry["llm_calls"] += step.llm_calls
            entry["prompt_tokens"] += step.prompt_tokens
            entry["completion_tokens"] += step.completion_tokens
            entry["sparql_queries"] += step.sparql_queries
            entry["seconds"] = round(entry["seconds"] + step.seconds, 4)
        return {
            "llm_calls": summary["llm_calls"],
            "prompt_tokens": summary["prompt_tokens"],
            "completion_tokens": summary["completion_tokens"],
            "cache_hits": summary["cache_hits"],
            "llm_seconds": summary["llm_seconds"],
            "sparql_queries": _query_count(self.graphs) - self._queries_at_start,
            "seconds": round(time.perf_counter() - self._started, 4),
            "by_step": by_step,
        }

    def finish(
        self,
        answer: str,
        *,
        grounding: Grounding,
        entities: Sequence[AnswerEntity] = (),
        evidence: Evidence | None = None,
    ) -> Answer:
        return Answer(
            question=self.question,
            answer=answer,
            method=self.method,
            entities=list(entities),
            evidence=evidence or Evidence(),
            steps=list(self.steps),
            usage=self.usage(),
            grounding=grounding,
            warnings=list(self.warnings),
            choices=self.choices,
            sources=[g.name for g in self.graphs],
        )


class MethodBase(ABC):
    """What every built-in method shares: input checks, its graphs, and the ``Run``.

    A subclass names itself and answers inside a prepared ``Run``; ``graphs_for``
    decides which graphs a call uses (by default the ``sources`` given, else its own).
    """

    name = "method"

    def __init__(self, llm: LLM, graph: KnowledgeGraph | None = None) -> None:
        self.llm = llm
        self.graph = graph

    def run(
        self,
        question: str,
        *,
        choices: Sequence[str] | None = None,
        sources: Sequence[KnowledgeGraph] | None = None,
        budget: Budget | None = None,
    ) -> Answer:
        text, options = check_question(question, choices)
        graphs = self.graphs_for(sources)
        run = Run(text, self.name, self.llm, graphs=graphs, budget=budget, choices=options)
        return self.answer(run)

    def graphs_for(self, sources: Sequence[KnowledgeGraph] | None) -> list[KnowledgeGraph]:
        if sources is not None:
            return list(sources)
        return [self.graph] if self.graph is not None else []

    @abstractmethod
    def answer(self, run: Run) -> Answer:
        """Answer ``run.question`` with the run's graphs, recording each step."""

"""What a method returns: the ``Answer``, its evidence, its steps and its usage.

Plain data: serializing it (JSON, RDF) is ``middleware.serialize``'s job.

>>> usage = Usage(llm_calls=2, prompt_tokens=100)
>>> usage["llm_calls"], usage.get("cache_hits"), usage.tokens
(2, 0, 100)
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from middleware.kg.base import Path, Triple
from middleware.kg.terms import Term
from middleware.methods.calibration import Basis

# What the evidence is: paths between entities, triples around them, nothing, or (for
# baselines) not looked for.
Grounding = Literal["paths", "neighbourhood", "none", "not-applicable"]
NOT_FOUND = "Not found in the graph."
# What a front end says in words when an answer is not found (``Answer.found`` false).
NOT_HELD = "The graph does not hold the answer."


@dataclass(frozen=True)
class AnswerEntity:
    """A graph entity the answer names."""

    iri: str
    label: str | None
    source: str | None


@dataclass(frozen=True)
class EvidencePath:
    """A path the answer rests on, as text and as triples with source IRIs."""

    path: Path
    text: str
    score: float | None = None
    key_entities: int | None = None

    @property
    def source(self) -> str | None:
        return self.path.hops[0].triple.source if self.path.hops else None


@dataclass(frozen=True)
class EvidenceTriple:
    """A single triple the answer rests on; ``role`` says why it is there."""

    triple: Triple
    text: str
    role: str = "fact"


@dataclass(frozen=True)
class QuestionEntity:
    """An entity the question names, with the words naming it and how they linked;
    ``weak`` says why the link is weak (fuzzy, or part of a longer name), or is None."""

    iri: str
    label: str | None
    span: str
    match: str
    source: str | None
    weak: str | None = None


@dataclass(frozen=True)
class Support:
    """Evidence triples that join a question entity to an answer entity, in order."""

    start: str  # the question entity's IRI
    answer: str  # the answer entity's IRI
    triples: tuple[Triple, ...]
    text: str
    weak: str | None = None  # the start's link is weak: why


@dataclass(frozen=True)
class Guess:
    """An answer the policy withheld: what the method would have said, and why not."""

    answer: str
    confidence: float
    entities: list[AnswerEntity]
    why: str
    support: list[Support] = field(default_factory=list)  # what did join (a weak link)


@dataclass
class Evidence:
    paths: list[EvidencePath] = field(default_factory=list)
    triples: list[EvidenceTriple] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.paths or self.triples)

    def all_triples(self) -> list[Triple]:
        """Every triple of the evidence once, path triples first."""
        seen: dict[tuple[str, str, str], Triple] = {}
        for path in self.paths:
            for hop in path.path.hops:
                seen.setdefault(hop.triple.key(), hop.triple)
        for item in self.triples:
            seen.setdefault(item.triple.key(), item.triple)
        return list(seen.values())

    def items(self) -> list[tuple[Term, ...]]:
        """The nodes of each evidence item (paths, then triples), in order."""
        nodes: list[tuple[Term, ...]] = [p.path.nodes for p in self.paths]
        nodes += [(t.triple.subject, t.triple.object) for t in self.triples]
        return nodes


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


class _Readable:
    """``usage["llm_calls"]`` and ``usage.get(...)`` read fields, as the dict once did."""

    def __getitem__(self, key: str) -> Any:
        if key not in {f.name for f in fields(self)}:  # type: ignore[arg-type]
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default


@dataclass
class StepUsage(_Readable):
    """What the steps of one name spent together."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    sparql_queries: int = 0
    seconds: float = 0.0


@dataclass
class Usage(_Readable):
    """What answering cost: LLM calls and tokens, SPARQL queries, time; also per step."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    llm_seconds: float = 0.0
    sparql_queries: int = 0
    seconds: float = 0.0
    by_step: dict[str, StepUsage] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Answer:
    """A method's answer with its evidence, the record of its steps, and its usage.

    ``grounded`` is true only when the evidence joins an entity the question names to
    an answer entity (``support`` holds those chains); ``confidence`` (0-1) says how
    well the graph backs the answer (see ``methods/steps.py``). ``found`` is false when
    no answer is given: the answer is ``NOT_FOUND`` and the withheld one, if any, is
    the ``guess``.
    """

    question: str
    answer: str
    method: str
    entities: list[AnswerEntity] = field(default_factory=list)
    evidence: Evidence = field(default_factory=Evidence)
    steps: list[Step] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    grounding: Grounding = "none"
    grounded: bool = False
    confidence: float = 0.0
    warnings: list[str] = field(default_factory=list)
    choices: list[str] | None = None
    sources: list[str] = field(default_factory=list)
    support: list[Support] = field(default_factory=list)
    found: bool = True
    guess: Guess | None = None
    basis: Basis | None = None  # what the confidence rests on

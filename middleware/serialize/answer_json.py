"""An ``Answer`` as JSON: the keys documented in docs/methods.md, kept by snapshot tests.

>>> from middleware.methods.answer import Answer
>>> sorted(answer_dict(Answer("Q?", "A", "io")))[:4]
['answer', 'choices', 'confidence', 'confidence_basis']
"""

from __future__ import annotations

import json
from typing import Any

from middleware.methods.answer import (
    Answer,
    AnswerEntity,
    Evidence,
    EvidencePath,
    EvidenceTriple,
    Guess,
    Step,
    StepUsage,
    Support,
    Usage,
)
from middleware.serialize.graph_json import path_json, triple_json


def entity_dict(entity: AnswerEntity) -> dict[str, Any]:
    return {"iri": entity.iri, "label": entity.label, "source": entity.source}


def evidence_path_dict(item: EvidencePath) -> dict[str, Any]:
    body = path_json(item.path, item.text)
    body["source"] = item.source
    if item.score is not None:
        body["score"] = round(item.score, 6)
    if item.key_entities is not None:
        body["key_entities"] = item.key_entities
    return body


def evidence_triple_dict(item: EvidenceTriple) -> dict[str, Any]:
    body = triple_json(item.triple, item.text)
    body["role"] = item.role
    return body


def evidence_dict(evidence: Evidence) -> dict[str, Any]:
    return {
        "paths": [evidence_path_dict(p) for p in evidence.paths],
        "triples": [evidence_triple_dict(t) for t in evidence.triples],
    }


def step_dict(step: Step) -> dict[str, Any]:
    return {
        "name": step.name,
        "seconds": round(step.seconds, 4),
        "prompt": step.prompt,
        "raw": step.raw,
        "parsed": step.parsed,
        "llm_calls": step.llm_calls,
        "prompt_tokens": step.prompt_tokens,
        "completion_tokens": step.completion_tokens,
        "sparql_queries": step.sparql_queries,
        "notes": list(step.notes),
    }


def _step_usage_dict(usage: StepUsage) -> dict[str, Any]:
    return {
        "llm_calls": usage.llm_calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "sparql_queries": usage.sparql_queries,
        "seconds": round(usage.seconds, 4),
    }


def usage_dict(usage: Usage) -> dict[str, Any]:
    return {
        "llm_calls": usage.llm_calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cache_hits": usage.cache_hits,
        "llm_seconds": usage.llm_seconds,
        "sparql_queries": usage.sparql_queries,
        "seconds": usage.seconds,
        "by_step": {name: _step_usage_dict(u) for name, u in usage.by_step.items()},
    }


def support_dict(chain: Support) -> dict[str, Any]:
    return {
        "from": chain.start,
        "to": chain.answer,
        "text": chain.text,
        "triples": [triple_json(t) for t in chain.triples],
        "weak_link": chain.weak,
    }


def guess_dict(guess: Guess | None) -> dict[str, Any] | None:
    if guess is None:
        return None
    return {
        "answer": guess.answer,
        "confidence": guess.confidence,
        "entities": [entity_dict(e) for e in guess.entities],
        "why": guess.why,
        "support": [support_dict(c) for c in guess.support],
    }


def answer_dict(answer: Answer) -> dict[str, Any]:
    """The whole answer as a JSON-ready dict; ``answer`` is null when the graph does not
    hold it (``found`` false; a withheld answer is the ``guess``)."""
    return {
        "question": answer.question,
        "answer": answer.answer if answer.found else None,
        "found": answer.found,
        "guess": guess_dict(answer.guess),
        "method": answer.method,
        "grounded": answer.grounded,
        "support": [support_dict(c) for c in answer.support],
        "confidence_basis": answer.basis.to_dict() if answer.basis is not None else None,
        "grounding": answer.grounding,
        "confidence": answer.confidence,
        "entities": [entity_dict(e) for e in answer.entities],
        "evidence": evidence_dict(answer.evidence),
        "steps": [step_dict(s) for s in answer.steps],
        "usage": usage_dict(answer.usage),
        "warnings": list(answer.warnings),
        "choices": answer.choices,
        "sources": list(answer.sources),
    }


def answer_json(answer: Answer, *, indent: int | None = 2) -> str:
    return json.dumps(answer_dict(answer), ensure_ascii=False, indent=indent)

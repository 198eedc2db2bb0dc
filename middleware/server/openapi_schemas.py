"""The schemas of the OpenAPI document (``openapi.py``): requests, the Answer with its
guess and support, chat completions, errors."""

from __future__ import annotations

from typing import Any

from middleware.methods.registry import METHODS


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error", "status", "message"],
        "properties": {
            "error": {"type": "string", "description": "error code, e.g. bad_request"},
            "status": {"type": "integer"},
            "message": {"type": "string"},
            "hint": {"type": "string"},
        },
    },
    "AnswerRequest": {
        "type": "object",
        "required": ["question"],
        "additionalProperties": False,
        "properties": {
            "question": {"type": "string", "maxLength": 2000},
            "method": {
                "type": "string",
                "description": f"one of {', '.join(METHODS)} (GET /v1/models)",
            },
            "choices": {"type": "array", "items": {"type": "string"}},
            "sources": {
                "type": "array",
                "items": {"type": "string"},
                "description": "source names (GET /v1/sources)",
            },
            "max_calls": {
                "type": "integer",
                "minimum": 1,
                "description": "lowers the server's LLM-call budget",
            },
        },
    },
    "Answer": {
        "type": "object",
        "description": "The answer (null when the graph does not hold it: found is false and guess holds what the method would have said, not supported by the graph), the chains of evidence that support it, the entities it names, its evidence (paths and triples with source IRIs), every step with prompt and raw output, usage (LLM calls, tokens, SPARQL queries, seconds), and evidence_graph (nodes and labelled edges).",
        "required": [
            "question",
            "answer",
            "found",
            "guess",
            "method",
            "grounded",
            "support",
            "grounding",
            "confidence",
            "entities",
            "evidence",
            "steps",
            "usage",
            "warnings",
            "choices",
            "sources",
        ],
        "properties": {
            "question": {"type": "string"},
            "answer": {
                "type": ["string", "null"],
                "description": "null when the graph does not hold the answer (found false)",
            },
            "found": {
                "type": "boolean",
                "description": "false when the answer policy withheld the answer (answer_graph_only, answer_min_confidence, answer_foreign_margin) or nothing was found",
            },
            "guess": {
                "oneOf": [{"type": "null"}, ref("Guess")],
                "description": "the withheld answer, when there was one; null otherwise",
            },
            "method": {"type": "string"},
            "grounded": {
                "type": "boolean",
                "description": "true only when support is not empty",
            },
            "support": {"type": "array", "items": ref("SupportChain")},
            "grounding": {
                "enum": ["paths", "neighbourhood", "none", "not-applicable"],
                "description": "what the evidence is; not-applicable for the baselines",
            },
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "confidence_basis": {
                "type": ["object", "null"],
                "description": "what the confidence rests on: given, evidence, supported, share, rank, hops, weak, relation_gap, mode, fallback, unheld (docs/methods.md)",
            },
            "entities": {"type": "array", "items": ref("Entity")},
            "evidence": {"type": "object"},
            "steps": {"type": "array", "items": {"type": "object"}},
            "usage": {"type": "object"},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "choices": {"type": ["array", "null"], "items": {"type": "string"}},
            "sources": {"type": "array", "items": {"type": "string"}},
            "evidence_graph": {"type": "object"},
            "conversation": {
                "type": "object",
                "description": "chat only, for a follow-up: asked (as sent), question (as answered), carried (entities from earlier turns)",
            },
        },
    },
    "Entity": {
        "type": "object",
        "required": ["iri", "label", "source"],
        "properties": {
            "iri": {"type": "string"},
            "label": {"type": ["string", "null"]},
            "source": {"type": ["string", "null"]},
        },
    },
    "Guess": {
        "type": "object",
        "description": "What the method would have answered, withheld: not supported by the graph (or not surely enough).",
        "required": ["answer", "confidence", "entities", "why"],
        "properties": {
            "answer": {"type": "string"},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "entities": {"type": "array", "items": ref("Entity")},
            "why": {"type": "string", "description": "why it was withheld"},
            "support": {
                "type": "array",
                "items": ref("SupportChain"),
                "description": "what did join the question to it (a weak link, or too unsure)",
            },
        },
    },
    "SupportChain": {
        "type": "object",
        "description": "Evidence triples that join an entity the question names (from) to an entity the answer names (to), in order.",
        "required": ["from", "to", "text", "triples", "weak_link"],
        "properties": {
            "from": {"type": "string", "description": "the question entity's IRI"},
            "to": {"type": "string", "description": "the answer entity's IRI"},
            "text": {"type": "string"},
            "triples": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["subject", "predicate", "object"],
                    "properties": {
                        "subject": {"type": "object"},
                        "predicate": {"type": "object"},
                        "object": {"type": "object"},
                        "source": {"type": ["string", "null"]},
                    },
                },
            },
            "weak_link": {
                "type": ["string", "null"],
                "description": "why the link to the question's entity is weak (fuzzy, or part of a longer name); null when it is not",
            },
        },
    },
    "ChatRequest": {
        "type": "object",
        "required": ["model", "messages"],
        "properties": {
            "model": {
                "type": "string",
                "description": "kgmw (the default method), or one of "
                + ", ".join(f"kgmw-{name}" for name in METHODS),
            },
            "messages": {
                "type": "array",
                "items": {"type": "object"},
                "description": "the last user message is the question; earlier turns resolve a follow-up",
            },
            "stream": {"type": "boolean"},
            "stream_options": {"type": "object"},
            "sources": {"type": "array", "items": {"type": "string"}},
            "choices": {"type": "array", "items": {"type": "string"}},
            "max_calls": {"type": "integer", "minimum": 1},
            "guess": {
                "type": "boolean",
                "description": "true: a reply whose answer the graph does not hold gives the withheld guess in its text, labelled as unsupported",
            },
        },
    },
    "ChatCompletion": {
        "type": "object",
        "description": "An OpenAI chat completion; its text is the answer (or 'The graph does not hold the answer.') and ends with a Sources section (chat_sources), the extra field kgmw holds the full Answer, also kept under id for GET /v1/answers/{id}.",
        "properties": {
            "id": {"type": "string"},
            "object": {"const": "chat.completion"},
            "model": {"type": "string"},
            "choices": {"type": "array", "items": {"type": "object"}},
            "usage": {"type": "object"},
            "kgmw": ref("Answer"),
        },
    },
}

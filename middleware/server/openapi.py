"""The OpenAPI 3.1 description of every route the service answers."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from middleware.server.openapi_schemas import SCHEMAS, ref
from middleware.server.page_files import PAGE_FILES

JSON = "application/json"


def _json_response(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": schema}}}


ERRORS = {
    "400": _json_response("Invalid input; the message says what to fix.", ref("Error")),
    "401": _json_response("Missing or wrong API key (when keys are set).", ref("Error")),
    "413": _json_response("Request body larger than server_max_body.", ref("Error")),
    "429": _json_response("Rate limit reached; see Retry-After.", ref("Error")),
    "502": _json_response("A SPARQL endpoint or the LLM failed.", ref("Error")),
    "503": _json_response(
        "The shared state (server_state_url's Redis) cannot be reached; see Retry-After.",
        ref("Error"),
    ),
    "504": _json_response("A SPARQL endpoint or the LLM timed out.", ref("Error")),
}


def _sparql_params() -> list[dict[str, Any]]:
    return [
        {
            "name": "query",
            "in": "query",
            "schema": {"type": "string"},
            "description": "SELECT, ASK, CONSTRUCT or DESCRIBE",
        },
        {
            "name": "source",
            "in": "query",
            "schema": {"type": "string"},
            "description": "source name; default source when absent",
        },
        {
            "name": "format",
            "in": "query",
            "schema": {"enum": ["json", "xml", "csv", "tsv", "turtle", "ntriples", "rdfxml"]},
            "description": "overrides the Accept header",
        },
    ]


SPARQL_RESULTS = {
    "description": "Query results in the negotiated format; X-Kgmw-Truncated is set when cut at sparql_max_rows.",
    "content": {
        media: {}
        for media in (
            "application/sparql-results+json",
            "application/sparql-results+xml",
            "text/csv",
            "text/tab-separated-values",
            "text/turtle",
            "application/n-triples",
            "application/rdf+xml",
        )
    },
}


def _paths() -> dict[str, Any]:
    body = {"required": True, "content": {JSON: {"schema": ref("AnswerRequest")}}}
    chat_body = {"required": True, "content": {JSON: {"schema": ref("ChatRequest")}}}
    return {
        "/v1/answer": {
            "post": {
                "summary": "Answer a question with its evidence and cost",
                "requestBody": body,
                "parameters": [
                    {
                        "name": "stream",
                        "in": "query",
                        "schema": {"type": "boolean"},
                        "description": "true: the steps as server-sent events (step, then answer, then done; or error), as with Accept: text/event-stream",
                    }
                ],
                "responses": {
                    "200": {
                        "description": "The answer, or with stream=true a text/event-stream of step events, the answer event, and done or error",
                        "content": {JSON: {"schema": ref("Answer")}, "text/event-stream": {}},
                    },
                    **ERRORS,
                },
            }
        },
        "/v1/answers/{answer_id}": {
            "get": {
                "summary": "A chat completion's full answer by the completion's id, for the key that asked, while kept (answers_ttl)",
                "parameters": [
                    {
                        "name": "answer_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {
                    "200": _json_response(
                        "The Answer JSON with id, created and model", ref("Answer")
                    ),
                    **ERRORS,
                },
            }
        },
        "/v1/chat/completions": {
            "post": {
                "summary": "OpenAI-compatible grounded chat (stream: server-sent events)",
                "requestBody": chat_body,
                "responses": {
                    "200": {
                        "description": "A chat completion, or with stream: true a text/event-stream of chat.completion.chunk events ending in [DONE]",
                        "content": {
                            JSON: {"schema": ref("ChatCompletion")},
                            "text/event-stream": {},
                        },
                    },
                    **ERRORS,
                },
            }
        },
        "/v1/models": {
            "get": {
                "summary": "Models (one per method), OpenAI list shape",
                "responses": {"200": _json_response("Model list", {"type": "object"})},
            }
        },
        "/v1/sources": {
            "get": {
                "summary": "The configured sources (and each one's path memory and its SHA-256)",
                "responses": {"200": _json_response("Sources", {"type": "object"})},
            }
        },
        "/sparql": {
            "get": {
                "summary": "Read-only SPARQL 1.1 Protocol query",
                "parameters": _sparql_params(),
                "responses": {"200": SPARQL_RESULTS, **ERRORS},
            },
            "post": {
                "summary": "Read-only SPARQL query as application/sparql-query or a form",
                "parameters": _sparql_params()[1:],
                "requestBody": {
                    "content": {
                        "application/sparql-query": {"schema": {"type": "string"}},
                        "application/x-www-form-urlencoded": {
                            "schema": {
                                "type": "object",
                                "properties": {"query": {"type": "string"}},
                            }
                        },
                    }
                },
                "responses": {"200": SPARQL_RESULTS, **ERRORS},
            },
        },
        "/healthz": {
            "get": {
                "summary": "The process is up",
                "security": [],
                "responses": {"200": _json_response("ok", {"type": "object"})},
            }
        },
        "/readyz": {
            "get": {
                "summary": "Sources, the LLM and the shared state (if any) answer",
                "security": [],
                "responses": {
                    "200": _json_response("ready", {"type": "object"}),
                    "503": _json_response(
                        "not ready; checks say which part failed", {"type": "object"}
                    ),
                },
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus text metrics",
                "responses": {
                    "200": {
                        "description": "text/plain; version=0.0.4",
                        "content": {"text/plain": {}},
                    }
                },
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "security": [],
                "responses": {"200": _json_response("OpenAPI 3.1", {"type": "object"})},
            }
        },
        "/": {
            "get": {
                "summary": "A page to ask questions and see the evidence graph",
                "security": [],
                "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}},
            }
        },
        "/static/{name}": {
            "get": {
                "summary": "The page's script, style and vendored graph library",
                "security": [],
                "parameters": [
                    {
                        "name": "name",
                        "in": "path",
                        "required": True,
                        "schema": {"enum": list(PAGE_FILES)},
                    }
                ],
                "responses": {"200": {"description": "JavaScript or CSS"}},
            }
        },
    }


def openapi_document() -> dict[str, Any]:
    try:
        release = version("kg-middleware")
    except PackageNotFoundError:
        release = "0+unknown"
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "kg-middleware",
            "version": release,
            "description": "Grounded answers over knowledge graphs, an OpenAI-compatible chat endpoint and a read-only SPARQL proxy.",
        },
        "paths": _paths(),
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "apiKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "set when server_api_keys is configured",
                }
            },
        },
        "security": [{"apiKey": []}],
    }

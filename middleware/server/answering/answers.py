"""``POST /v1/answer``: a question in, the ``Answer`` JSON out (or, with
``?stream=true`` or ``Accept: text/event-stream``, its steps as server-sent events and
then the answer: ``answer_stream.py``); ``GET /v1/answers/{id}``: a chat completion's
kept answer. The request checks are shared with the chat route."""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, jsonify, request, stream_with_context

from middleware.errors import BadRequest, NotFound
from middleware.kg.base import KnowledgeGraph
from middleware.llm.ledger import Budget
from middleware.methods.answer import Answer
from middleware.methods.method import Method
from middleware.methods.progress import StepListener
from middleware.methods.run import check_question
from middleware.serialize.answer_json import answer_dict
from middleware.server.answering.answer_store import owner_of
from middleware.server.answering.answer_stream import step_stream
from middleware.server.answering.evidence_graph import evidence_graph
from middleware.server.context import grant, metrics, state
from middleware.server.guard import permit
from middleware.server.json_body import check_text
from middleware.server.metrics import Metrics

blueprint = Blueprint("answers", __name__)
ANSWER_FIELDS = {"question", "method", "choices", "sources", "max_calls"}


@dataclass(frozen=True)
class AnswerRequest:
    """A validated request for one answer."""

    question: str
    method: str | None = None
    choices: list[str] | None = None
    sources: list[str] | None = None
    max_calls: int | None = None

    @classmethod
    def from_json(cls, body: dict[str, Any], *, where: str = "request") -> AnswerRequest:
        question = body.get("question")
        if not isinstance(question, str) or not question.strip():
            raise BadRequest(f"{where}: 'question' must be a non-empty string")
        return cls(
            question=question,
            method=_optional_text(body, "method", where),
            choices=_text_list(body, "choices", where),
            sources=_text_list(body, "sources", where),
            max_calls=_max_calls(body, where),
        )


def request_json() -> dict[str, Any]:
    """The request body as a JSON object, or a BadRequest saying what was wrong (a body
    nested past ``server_max_json_depth`` is refused by the app's JSON provider)."""
    if not request.is_json:
        raise BadRequest(
            f"expected a JSON body, got Content-Type {request.mimetype or 'none'!r}",
            hint="send Content-Type: application/json",
        )
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object", hint='e.g. {"question": "..."}')
    check_text(body, "body")
    return body


@dataclass(frozen=True)
class PreparedAnswer:
    """A request's method, graphs and budget, resolved inside the request; ``run`` may
    then be called from any thread."""

    ask: AnswerRequest
    method: Method
    graphs: list[KnowledgeGraph]
    budget: Budget
    metrics: Metrics

    def run(self, listener: StepListener | None = None) -> Answer:
        answer = self.method.run(
            self.ask.question,
            choices=self.ask.choices,
            sources=self.graphs if self.ask.sources else None,
            budget=self.budget,
            listener=listener,
        )
        self.metrics.count_usage(answer.method, answer.usage)
        return answer


def prepare_answer(ask: AnswerRequest) -> PreparedAnswer:
    """Resolve the method and sources a request names (unknown ones fail here)."""
    check_question(ask.question, ask.choices)  # bad input is a 400 before any stream starts
    app_state = state()
    names = ask.sources or [app_state.default_source]
    permit(grant(), sources=names, method=app_state.method_name(ask.method))
    method = app_state.method(ask.method, names[0])
    graphs: list[KnowledgeGraph] = [app_state.graph(name) for name in names]
    return PreparedAnswer(ask, method, graphs, app_state.budget(ask.max_calls), metrics())


def answer_body(answer: Answer, graphs: list[KnowledgeGraph]) -> dict[str, Any]:
    """The Answer JSON with its evidence drawn as nodes and edges (``evidence_graph``)."""
    body = answer_dict(answer)
    body["evidence_graph"] = evidence_graph(answer, {graph.name: graph for graph in graphs})
    if state().settings.server_redact_steps:  # prompts and raw LLM output stay here
        for step in body["steps"]:
            step["prompt"] = step["raw"] = None
    return body


@blueprint.post("/v1/answer")
def answer() -> Response:
    body = request_json()
    unknown = sorted(set(body) - ANSWER_FIELDS)
    if unknown:
        raise BadRequest(
            f"unknown field(s) {', '.join(unknown)}",
            hint=f"known fields: {', '.join(sorted(ANSWER_FIELDS))}",
        )
    streaming = _wants_stream()
    prepared = prepare_answer(AnswerRequest.from_json(body))
    if not streaming:
        return jsonify(answer_body(prepared.run(), prepared.graphs))
    gone = threading.Event()  # set when the client stops reading: no more LLM calls
    prepared = dataclasses.replace(
        prepared, budget=dataclasses.replace(prepared.budget, cancelled=gone)
    )
    events = step_stream(prepared.run, lambda done: answer_body(done, prepared.graphs), gone)
    return Response(
        stream_with_context(events),
        content_type="text/event-stream; charset=utf-8",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@blueprint.get("/v1/answers/<answer_id>")
def kept_answer(answer_id: str) -> Response:
    """A chat completion's answer, for the key that asked for it, while it is kept."""
    app_state = state()
    store = app_state.answer_store
    owner = owner_of(request.headers.get("Authorization"), keys=app_state.keys_enabled)
    found = store.get(answer_id, owner) if store is not None else None
    if found is None:  # missing, expired, evicted or someone else's: all read the same
        raise NotFound(
            "no kept answer with this id",
            hint="ids are chat completion ids; an answer is kept for answers_ttl seconds, "
            "for the API key that asked for it",
        )
    return jsonify(found)


def _wants_stream() -> bool:
    """``?stream=true`` (or ``false``), else whether ``Accept`` asks for an event stream."""
    value = request.args.get("stream")
    if value is None:  # named in Accept, and not below JSON
        named = {mimetype: quality for mimetype, quality in request.accept_mimetypes}
        wanted = named.get("text/event-stream", 0)
        return wanted > 0 and wanted >= named.get("application/json", 0)
    if value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise BadRequest(f"stream must be true or false, not {value!r}", hint="e.g. ?stream=true")


def _optional_text(body: dict[str, Any], key: str, where: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{where}: {key!r} must be a non-empty string")
    return value


def _text_list(body: dict[str, Any], key: str, where: str) -> list[str] | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise BadRequest(f"{where}: {key!r} must be a non-empty list of strings")
    return list(value)


def _max_calls(body: dict[str, Any], where: str) -> int | None:
    value = body.get("max_calls")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise BadRequest(f"{where}: 'max_calls' must be a positive integer")
    return value

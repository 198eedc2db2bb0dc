"""OpenAI-compatible ``/v1/models`` and ``/v1/chat/completions``.

The ``model`` picks the method (``kgmw-rok``, ``kgmw-io``, ...; ``kgmw`` is the default
method); the last user message is the question. The reply is a chat completion whose
text is the answer followed by the evidence it cites; the whole ``Answer`` rides along
in the extra field ``kgmw``. Extra request fields ``sources``, ``choices`` and
``max_calls`` (the OpenAI client's ``extra_body``) mean what they mean on ``/v1/answer``.
With ``stream: true`` the reply comes as server-sent events in OpenAI's chunk format;
while the method works, comment lines keep the connection alive.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, jsonify, stream_with_context

from middleware.errors import BadRequest, MiddlewareError, NotFound
from middleware.methods.answer import Answer
from middleware.methods.registry import METHODS
from middleware.server.answers import AnswerRequest, answer_body, prepare_answer, request_json
from middleware.server.context import grant, metrics, state
from middleware.server.errors import error_body

blueprint = Blueprint("chat", __name__)
MODEL_PREFIX = "kgmw-"
KEEP_ALIVE_SECONDS = 2.0
CITED_EVIDENCE = 10
CHUNK_WORDS = 4


def model_names() -> dict[str, str]:
    """Model id to description: one per method, plus ``kgmw`` for the default method."""
    models = {"kgmw": f"the service's default method ({state().settings.method})"}
    models.update({MODEL_PREFIX + name: text for name, text in METHODS.items()})
    allowed = grant()
    if allowed is not None and allowed.methods is not None:  # a [keys.NAME] key's own
        default = state().settings.method
        models = {
            model: text
            for model, text in models.items()
            if (default if model == "kgmw" else model.removeprefix(MODEL_PREFIX)) in allowed.methods
        }
    return models


def method_for(model: str) -> str | None:
    """The method a model id names (None: the default method)."""
    if model == "kgmw":
        return None
    name = model.removeprefix(MODEL_PREFIX)
    if not model.startswith(MODEL_PREFIX) or name not in METHODS:
        raise NotFound(
            f"unknown model {model!r}", hint=f"models: {', '.join(model_names())} (GET /v1/models)"
        )
    return name


@blueprint.get("/v1/models")
def models() -> Response:
    return jsonify(
        {
            "object": "list",
            "data": [
                {
                    "id": name,
                    "object": "model",
                    "created": 0,
                    "owned_by": "kg-middleware",
                    "description": text,
                }
                for name, text in model_names().items()
            ],
        }
    )


@blueprint.post("/v1/chat/completions")
def chat_completions() -> Response:
    body = request_json()
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' must name a model", hint="GET /v1/models lists them")
    if body.get("n", 1) != 1:
        raise BadRequest("only n=1 is supported")
    ask = AnswerRequest.from_json(
        {
            "question": last_user_message(body.get("messages")),
            "method": method_for(model),
            "choices": body.get("choices"),
            "sources": body.get("sources"),
            "max_calls": body.get("max_calls"),
        },
        where="chat request",
    )
    prepared = prepare_answer(ask)
    reply = _Reply(model)
    if body.get("stream") is True:
        options = body.get("stream_options") or {}
        usage_chunk = isinstance(options, dict) and options.get("include_usage") is True
        gone = threading.Event()  # set when the client stops reading: no more LLM calls
        prepared = dataclasses.replace(
            prepared, budget=dataclasses.replace(prepared.budget, cancelled=gone)
        )
        worker = _Worker(prepared.run)
        events = reply.stream(worker, prepared.graphs, include_usage=usage_chunk, gone=gone)
        return Response(
            stream_with_context(events),
            content_type="text/event-stream; charset=utf-8",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    answer = prepared.run()
    return jsonify(reply.completion(answer, answer_body(answer, prepared.graphs)))


def last_user_message(messages: Any) -> str:
    """The text of the last ``user`` message (string content or text parts)."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list of chat messages")
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                texts = [
                    part.get("text", "")
                    for part in content
                    if isinstance(part, dict) and part.get("type") == "text"
                ]
                return " ".join(t for t in texts if isinstance(t, str))
            raise BadRequest("the last user message has no text content")
    raise BadRequest("no message with role 'user'", hint="put the question in a user message")


def cited_text(answer: Answer) -> str:
    """The answer, then the evidence it rests on as numbered lines."""
    lines = [answer.answer or "(no answer)"]
    cited = [(p.text, p.source) for p in answer.evidence.paths]
    cited += [(t.text, t.triple.source) for t in answer.evidence.triples]
    if cited:
        lines += ["", "Evidence:"]
        for number, (text, source) in enumerate(cited[:CITED_EVIDENCE], start=1):
            lines.append(f"[{number}] {text}" + (f" ({source})" if source else ""))
        if len(cited) > CITED_EVIDENCE:
            lines.append(f"... and {len(cited) - CITED_EVIDENCE} more in the kgmw field")
    elif not answer.grounded:
        lines += ["", "(not grounded in a graph)"]
    return "\n".join(lines)


def chat_usage(answer: Answer) -> dict[str, int]:
    prompt, completion = answer.usage.prompt_tokens, answer.usage.completion_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


class _Worker:
    """Runs the answer in a thread, so the stream can send keep-alives meanwhile."""

    def __init__(self, job: Any) -> None:
        self._done: queue.Queue[tuple[Answer | None, BaseException | None]] = queue.Queue(1)

        def work() -> None:
            try:
                self._done.put((job(), None))
            except BaseException as err:  # handed to the stream, which reports it
                self._done.put((None, err))

        threading.Thread(target=work, name="kgmw-answer", daemon=True).start()

    def wait(self, seconds: float) -> tuple[Answer | None, BaseException | None] | None:
        try:
            return self._done.get(timeout=seconds)
        except queue.Empty:
            return None


class _Reply:
    def __init__(self, model: str) -> None:
        self.model = model
        self.id = f"chatcmpl-kgmw-{uuid.uuid4().hex}"
        self.created = int(time.time())

    def completion(self, answer: Answer, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": cited_text(answer)},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": chat_usage(answer),
            "kgmw": body,
        }

    def _chunk(self, delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> str:
        """One ``chat.completion.chunk`` event; ``delta=None`` sends no choices."""
        choices = (
            []
            if delta is None
            else [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
        )
        chunk = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
            **extra,
        }
        return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"

    def stream(
        self,
        worker: _Worker,
        graphs: list[Any],
        *,
        include_usage: bool,
        gone: threading.Event | None = None,
    ) -> Iterator[str]:
        """The answer as SSE chunks; whatever fails, an error event, and always
        ``[DONE]`` last, so no client is left with a stream that just stops. When the
        client goes away (the server closes this generator), ``gone`` is set and the
        answer's remaining LLM calls are not made."""
        try:
            try:
                yield from self._events(worker, graphs, include_usage=include_usage)
            except Exception as failure:  # a chunk that could not be written
                yield self._error(failure)
            yield "data: [DONE]\n\n"
        except GeneratorExit:
            if gone is not None:
                gone.set()
            raise

    def _events(self, worker: _Worker, graphs: list[Any], *, include_usage: bool) -> Iterator[str]:
        yield self._chunk({"role": "assistant", "content": ""})
        outcome = worker.wait(KEEP_ALIVE_SECONDS)
        while outcome is None:
            yield ": kgmw is working on the answer\n\n"
            outcome = worker.wait(KEEP_ALIVE_SECONDS)
        answer, failure = outcome
        if failure is not None or answer is None:
            yield self._error(failure)
            return
        chunks = []  # written in full first: a failure cannot cut the stream midway
        words = cited_text(answer).split(" ")
        for start in range(0, len(words), CHUNK_WORDS):
            piece = " ".join(words[start : start + CHUNK_WORDS])
            chunks.append(self._chunk({"content": piece if start == 0 else " " + piece}))
        chunks.append(self._chunk({}, "stop", kgmw=answer_body(answer, graphs)))
        if include_usage:
            chunks.append(self._chunk(None, usage=chat_usage(answer)))
        yield from chunks

    def _error(self, failure: BaseException | None) -> str:
        error = failure if isinstance(failure, MiddlewareError) else None
        metrics().count_error(type(failure).__name__)
        body, status = error_body(error or failure, openai_shape=True)
        body["error"]["status"] = status
        return f"data: {json.dumps(body)}\n\n"

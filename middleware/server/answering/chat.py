"""OpenAI-compatible ``/v1/models`` and ``/v1/chat/completions``.

The ``model`` picks the method (``kgmw-rok``, ``kgmw-io``, ...; ``kgmw`` is the default
method); the last user message is the question, made standalone with the entities of
earlier turns when it is a follow-up (``text/follow_ups.py``). The reply is a chat
completion whose text is the answer followed by a Sources section (``chat_text.py``);
the whole ``Answer`` rides along in the extra field ``kgmw`` and is kept under the
completion's id for ``GET /v1/answers/{id}`` (``answer_store.py``). Extra request fields ``sources``, ``choices`` and
``max_calls`` (the OpenAI client's ``extra_body``) mean what they mean on ``/v1/answer``;
``guess: true`` adds the withheld guess, labelled as unsupported, to the text of a reply
whose answer the graph does not hold.
With ``stream: true`` the reply comes as server-sent events in OpenAI's chunk format;
while the method works, comment lines keep the connection alive.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, jsonify, request, stream_with_context

from middleware.errors import BadRequest, MiddlewareError, NotFound, StateUnavailable
from middleware.kg.base import KnowledgeGraph
from middleware.methods.answer import Answer
from middleware.methods.registry import METHODS
from middleware.server.answering.answer_store import new_answer_id, owner_of
from middleware.server.answering.answers import (
    AnswerRequest,
    answer_body,
    prepare_answer,
    request_json,
)
from middleware.server.answering.chat_text import reply_text, sources_text
from middleware.server.answering.conversation import conversation
from middleware.server.answering.worker import AnswerWorker, Outcome
from middleware.server.context import grant, metrics, state
from middleware.server.errors import error_body, log
from middleware.text.follow_ups import FollowUp, resolve_follow_up

blueprint = Blueprint("chat", __name__)
MODEL_PREFIX = "kgmw-"
KEEP_ALIVE_SECONDS = 2.0
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
    question, turns = conversation(body.get("messages"))
    ask = AnswerRequest.from_json(
        {
            "question": question,
            "method": method_for(model),
            "choices": body.get("choices"),
            "sources": body.get("sources"),
            "max_calls": body.get("max_calls"),
        },
        where="chat request",
    )
    show_guess = body.get("guess", False)
    if not isinstance(show_guess, bool):
        raise BadRequest(
            "chat request: 'guess' must be true or false",
            hint="guess: true adds the withheld guess to a reply the graph does not hold",
        )
    prepared = prepare_answer(ask)
    follow_up = FollowUp(question, question)
    if state().settings.chat_follow_ups and turns:
        first_source = ask.sources[0] if ask.sources else None
        follow_up = resolve_follow_up(question, turns, state().linker(first_source))
        prepared = dataclasses.replace(
            prepared, ask=dataclasses.replace(ask, question=follow_up.question)
        )
    reply = _Reply(model, prepared.graphs, follow_up, show_guess=show_guess)
    if body.get("stream") is True:
        options = body.get("stream_options") or {}
        usage_chunk = isinstance(options, dict) and options.get("include_usage") is True
        gone = threading.Event()  # set when the client stops reading: no more LLM calls
        prepared = dataclasses.replace(
            prepared, budget=dataclasses.replace(prepared.budget, cancelled=gone)
        )
        events = reply.stream(AnswerWorker(prepared.run), include_usage=usage_chunk, gone=gone)
        return Response(
            stream_with_context(events),
            content_type="text/event-stream; charset=utf-8",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    return jsonify(reply.completion(prepared.run()))


def chat_usage(answer: Answer) -> dict[str, int]:
    prompt, completion = answer.usage.prompt_tokens, answer.usage.completion_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


class _Reply:
    """One completion: its id, its text (the answer and its Sources), its ``kgmw`` body;
    the answer is kept under the id for ``GET /v1/answers/{id}``."""

    def __init__(
        self,
        model: str,
        graphs: list[KnowledgeGraph],
        follow_up: FollowUp,
        *,
        show_guess: bool = False,
    ) -> None:
        self.model = model
        self.show_guess = show_guess
        self.graphs = graphs
        self.follow_up = follow_up
        self.id = new_answer_id()
        self.created = int(time.time())
        self.store = state().answer_store
        self.owner = owner_of(request.headers.get("Authorization"), keys=state().keys_enabled)
        self.settings = state().settings

    def body(self, answer: Answer) -> tuple[str, dict[str, Any]]:
        """The message text and the ``kgmw`` body; the answer is kept on the way."""
        body = answer_body(answer, self.graphs)
        if self.follow_up.changed:
            body["conversation"] = {
                "asked": self.follow_up.asked,
                "question": self.follow_up.question,
                "carried": [{"iri": e.iri.value, "label": e.label} for e in self.follow_up.carried],
            }
        kept = self._keep({"id": self.id, "created": self.created, "model": self.model, **body})
        if not self.settings.chat_sources:
            return reply_text(answer, show_guess=self.show_guess), body
        text = sources_text(
            answer,
            self.graphs,
            answer_id=self.id if kept else None,
            limit=self.settings.chat_sources_max,
            literal_max_chars=self.settings.literal_max_chars,
            show_guess=self.show_guess,
        )
        return text, body

    def _keep(self, body: dict[str, Any]) -> bool:
        """Keep ``body`` for ``GET /v1/answers/{id}``; False when it is not kept (too
        large, or the shared state is away: the answer itself still goes out)."""
        if self.store is None:
            return False
        try:
            return self.store.put(self.id, self.owner, body)
        except StateUnavailable as err:
            log.warning("kgmw: answer %s not kept: %s", self.id, err)
            return False

    def completion(self, answer: Answer) -> dict[str, Any]:
        text, body = self.body(answer)
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
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
        worker: AnswerWorker,
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
                yield from self._events(worker, include_usage=include_usage)
            except Exception as failure:  # a chunk that could not be written
                yield self._error(failure)
            yield "data: [DONE]\n\n"
        except GeneratorExit:
            if gone is not None:
                gone.set()
            raise

    def _events(self, worker: AnswerWorker, *, include_usage: bool) -> Iterator[str]:
        yield self._chunk({"role": "assistant", "content": ""})
        written = time.monotonic()  # steps go by silently; every quiet spell gets a comment
        item = worker.next(KEEP_ALIVE_SECONDS)
        while not isinstance(item, Outcome):
            if time.monotonic() - written >= KEEP_ALIVE_SECONDS:
                yield ": kgmw is working on the answer\n\n"
                written = time.monotonic()
            item = worker.next(max(0.0, written + KEEP_ALIVE_SECONDS - time.monotonic()))
        answer, failure = item.answer, item.failure
        if failure is not None or answer is None:
            yield self._error(failure)
            return
        text, body = self.body(answer)
        chunks = []  # written in full first: a failure cannot cut the stream midway
        words = text.split(" ")
        for start in range(0, len(words), CHUNK_WORDS):
            piece = " ".join(words[start : start + CHUNK_WORDS])
            chunks.append(self._chunk({"content": piece if start == 0 else " " + piece}))
        chunks.append(self._chunk({}, "stop", kgmw=body))
        if include_usage:
            chunks.append(self._chunk(None, usage=chat_usage(answer)))
        yield from chunks

    def _error(self, failure: BaseException | None) -> str:
        error = failure if isinstance(failure, MiddlewareError) else None
        metrics().count_error(type(failure).__name__)
        body, status = error_body(error or failure, openai_shape=True)
        body["error"]["status"] = status
        return f"data: {json.dumps(body)}\n\n"

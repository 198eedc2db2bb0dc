"""``/v1/answer`` as server-sent events: each step as it starts and ends, then the answer.

The events are ``step`` (a ``StepEvent``: ``kind`` start, end or llm, the step's name
and index, and at its end what it spent), then ``answer`` (the body ``/v1/answer``
would return), then ``done``; a failure at any point sends ``error`` (the error JSON
with its status) instead and ends the stream. Every stream ends with ``done`` or
``error``. Quiet spells get SSE comments so proxies keep the connection open; when the
client goes away, the answer's remaining LLM calls are not made.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

from middleware.methods.answer import Answer
from middleware.methods.progress import StepEvent, StepListener
from middleware.server.answering.worker import AnswerWorker, Outcome
from middleware.server.context import metrics
from middleware.server.errors import error_body

KEEP_ALIVE_SECONDS = 2.0


def sse(event: str, data: Any) -> str:
    """One server-sent event with a JSON payload."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def step_stream(
    job: Callable[[StepListener], Answer],
    render: Callable[[Answer], dict[str, Any]],
    gone: threading.Event,
) -> Iterator[str]:
    """Run ``job`` in a thread and stream its events; ``render`` makes the answer's body."""
    try:
        try:
            yield from _events(AnswerWorker(job), render)
            yield sse("done", {})
        except Exception as failure:  # an event that could not be made: said, not lost
            yield _error(failure)
    except GeneratorExit:
        gone.set()
        raise


def _events(worker: AnswerWorker, render: Callable[[Answer], dict[str, Any]]) -> Iterator[str]:
    while True:
        item = worker.next(KEEP_ALIVE_SECONDS)
        if item is None:
            yield ": kgmw is working on the answer\n\n"
        elif isinstance(item, StepEvent):
            yield sse("step", item.as_dict())
        elif isinstance(item, Outcome):
            if item.answer is None:
                raise _Failed(item.failure)
            yield sse("answer", render(item.answer))
            return


class _Failed(Exception):
    """The job raised ``failure``: reported as an error event."""

    def __init__(self, failure: BaseException | None) -> None:
        super().__init__(str(failure))
        self.failure = failure


def _error(failure: Exception) -> str:
    cause = failure.failure if isinstance(failure, _Failed) else failure
    metrics().count_error(type(cause).__name__)
    body, status = error_body(cause, openai_shape=False)
    body["status"] = status
    return sse("error", body)

"""A chat stream always ends with ``data: [DONE]``, after an error event when the
answer failed or could not be written."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

import httpx
import pytest
from flask import Flask

from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app
from tests.cli_helpers import rok_script
from tests.server.conftest import LiveServer, settings
from tests.waiting import PATIENCE

QUESTION = {"role": "user", "content": "Who directed Titanic?"}


def events(server: LiveServer, **extra: object) -> list[str]:
    body = {"model": "kgmw-rok", "stream": True, "messages": [QUESTION], **extra}
    with httpx.stream(
        "POST", f"{server.url}/v1/chat/completions", json=body, timeout=60
    ) as response:
        assert response.status_code == 200
        return [line[6:] for line in response.iter_lines() if line.startswith("data: ")]


def test_a_failed_answer_streams_an_error_then_done(scripted_server: LiveServer) -> None:
    received = events(scripted_server, max_calls=1)  # RoK needs more calls than one
    assert received[-1] == "[DONE]"
    assert "error" in json.loads(received[-2])


def test_a_failure_while_writing_streams_an_error_then_done(
    scripted_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> dict[str, object]:
        raise RuntimeError("cannot write the evidence")

    monkeypatch.setattr("middleware.server.answering.chat.answer_body", broken)
    received = events(scripted_server)
    assert received[-1] == "[DONE]"
    error = json.loads(received[-2])["error"]
    assert error["status"] == 500 and "Traceback" not in json.dumps(error)


class SlowScript(ScriptedLLM):
    """RoK's scripted replies, one second each."""

    def _reply(self, prompt: str) -> str:
        time.sleep(1.0)
        return super()._reply(prompt)


def answer_jobs() -> set[threading.Thread]:
    """The threads working out answers for streams (``AnswerWorker``'s) now running."""
    return {t for t in threading.enumerate() if t.name == "kgmw-answer"}


def wait_for_jobs(jobs: set[threading.Thread]) -> None:
    """Until ``jobs`` end: stopped, or done with all their LLM calls. Instead of a fixed
    wait, which had to be long enough for the calls a stop should have saved."""
    for job in jobs:
        job.join(PATIENCE)
        assert not job.is_alive()


def test_a_client_that_goes_away_stops_the_llm_calls(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    script = rok_script()
    llm = SlowScript(script.rules, default=script.default)
    server = serve(create_app(settings(llm_cache=False), llm=llm, graphs={"sample": sample_graph}))
    body = {"model": "kgmw-rok", "stream": True, "messages": [QUESTION]}
    before = answer_jobs()
    with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body, timeout=60) as r:
        next(r.iter_lines())  # the first chunk, then the client leaves
        job = answer_jobs() - before  # started before the first chunk
    wait_for_jobs(job)  # a keep-alive write finds the connection gone
    assert len(llm.calls) <= 3  # RoK needed 4 calls

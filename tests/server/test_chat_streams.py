"""A chat stream always ends with ``data: [DONE]``, after an error event when the
answer failed or could not be written."""

from __future__ import annotations

import json
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


def test_a_client_that_goes_away_stops_the_llm_calls(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    script = rok_script()
    llm = SlowScript(script.rules, default=script.default)
    server = serve(create_app(settings(llm_cache=False), llm=llm, graphs={"sample": sample_graph}))
    body = {"model": "kgmw-rok", "stream": True, "messages": [QUESTION]}
    with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body, timeout=60) as r:
        next(r.iter_lines())  # the first chunk, then the client leaves
    time.sleep(8.0)  # a keep-alive write finds the connection gone; RoK needed 4 calls
    assert len(llm.calls) <= 3

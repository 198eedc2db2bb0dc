"""The /sparql proxy as a security boundary: smuggling, crashers and protocol details."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from flask import Flask

from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from tests.kg.test_sparql_guard import CRASHERS, Listener, listener, settle, shapes
from tests.server.conftest import LiveServer, settings

__all__ = ["listener"]  # the fixture, shared with the store-level tests


def test_no_smuggled_service_reaches_the_network_from_the_service(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore, listener: Listener
) -> None:
    server = serve(create_app(settings(), graphs={"sample": sample_graph}))
    for query in shapes(listener):
        response = httpx.post(f"{server.url}/sparql", data={"query": query}, timeout=30)
        assert response.status_code in (200, 400), (query, response.text)
    assert settle(listener) == 0


def test_crashers_get_a_400_and_the_service_stays_up(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    server = serve(create_app(settings(sparql_penalty=0.0), graphs={"sample": sample_graph}))
    url = f"{server.url}/sparql"
    for name, query in CRASHERS.items():
        response = httpx.post(url, data={"query": query}, timeout=30)
        assert response.status_code in (400, 413), (name, response.text)
        assert "sparql_max_" in response.json()["hint"], name
    assert httpx.get(url, params={"query": "ASK {}"}).status_code == 200


def test_a_caller_sending_crashers_again_and_again_is_put_in_the_penalty_box(
    scripted_server: LiveServer,
) -> None:
    url = f"{scripted_server.url}/sparql"
    deep = CRASHERS["nested braces"]
    statuses = [httpx.post(url, data={"query": deep}, timeout=30).status_code for _ in range(3)]
    assert statuses == [400, 400, 400]  # mistakes cost nothing
    assert httpx.get(url, params={"query": "ASK {}"}).status_code == 200
    assert httpx.post(url, data={"query": deep}, timeout=30).status_code == 400  # the 4th
    refused = httpx.get(url, params={"query": "ASK {}"})
    assert refused.status_code == 429 and "sparql_penalty" in refused.json()["hint"]


def test_a_lone_surrogate_in_a_chat_message_is_a_400_before_any_llm_call(
    scripted_server: LiveServer,
) -> None:
    body = (
        '{"model": "kgmw-rok", "stream": STREAM, '
        '"messages": [{"role": "user", "content": "Who directed \\ud800 Titanic?"}]}'
    )
    for stream in ("false", "true"):
        response = httpx.post(
            f"{scripted_server.url}/v1/chat/completions",
            content=body.replace("STREAM", stream),
            headers={"Content-Type": "application/json"},
            timeout=60,
        )
        assert response.status_code == 400, response.text
        assert "not valid Unicode" in response.text  # in OpenAI's error shape
    answer = httpx.post(
        f"{scripted_server.url}/v1/answer",
        content='{"question": "Who directed \\udfff Titanic?"}',
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
    assert answer.status_code == 400 and "not valid Unicode" in answer.json()["message"]

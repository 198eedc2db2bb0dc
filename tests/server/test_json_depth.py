"""Deeply nested JSON bodies get a 400 naming ``server_max_json_depth``, never a 500: the
nesting is counted before the body is parsed, without recursion, and nothing walks a
parsed body recursively."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from flask import Flask

from middleware.errors import BadRequest
from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from middleware.server.json_body import check_text, json_depth
from tests.cli_helpers import rok_script
from tests.server.conftest import LiveServer, settings

JSON = {"Content-Type": "application/json"}


def post(server: LiveServer, path: str, body: str | bytes) -> httpx.Response:
    return httpx.post(f"{server.url}{path}", content=body, headers=JSON, timeout=60)


def test_100000_nested_arrays_in_an_answer_request_get_a_400(scripted_server: LiveServer) -> None:
    response = post(scripted_server, "/v1/answer", "[" * 100_000 + "]" * 100_000)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["message"] == "the JSON body is nested 100000 levels deep, more than 64"
    assert "server_max_json_depth" in body["hint"]


def test_990_nested_arrays_in_a_chat_message_get_a_400(scripted_server: LiveServer) -> None:
    content = "[" * 990 + "]" * 990
    body = f'{{"model": "kgmw-rok", "messages": [{{"role": "user", "content": {content}}}]}}'
    for stream in (False, True):
        sent = body.replace('"model"', f'"stream": {json.dumps(stream)}, "model"')
        response = post(scripted_server, "/v1/chat/completions", sent)
        assert response.status_code == 400, response.text
        error = response.json()["error"]  # OpenAI's shape
        assert "nested" in error["message"] and "server_max_json_depth" in error["message"]


def test_a_body_at_the_limit_is_read(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    def app(depth: int) -> LiveServer:
        chosen = settings(server_max_json_depth=depth)
        return serve(create_app(chosen, llm=rok_script(), graphs={"sample": sample_graph}))

    ask = json.dumps({"question": "Who directed Titanic?", "method": "io", "sources": ["sample"]})
    assert post(app(2), "/v1/answer", ask).status_code == 200  # an object holding a list
    refused = post(app(1), "/v1/answer", ask)
    assert refused.status_code == 400 and "server_max_json_depth" in refused.json()["hint"]


def test_brackets_in_strings_do_not_count(scripted_server: LiveServer) -> None:
    question = 'Who directed "[[[[[[ Titanic \\" {{{{{{{{? ' * 20
    response = post(scripted_server, "/v1/answer", json.dumps({"question": question}))
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("", 0),
        ("1", 0),
        ("[]", 1),
        ('{"a": [1, {"b": []}]}', 4),
        ('["[[[", "\\"[[", {"k]": "\\\\"}]', 2),
        ("[[], [[]], [], [[[]]]]", 4),
        ('"unterminated [[[[', 0),
        ('[["a\\\\"], [[', 3),
    ],
)
def test_json_depth(text: str, depth: int) -> None:
    assert json_depth(text) == depth


def test_the_scan_is_linear_on_hostile_text() -> None:
    # escaped quotes in an unterminated string: a backtracking scanner rescans from each
    assert json_depth('"' + '\\"[' * 300_000) == 0
    assert json_depth('["' + "\\\\" * 300_000 + '"]') == 1
    assert json_depth("[" * 200_000) == 200_000


def test_a_utf16_body_is_counted_too(sample_graph: LocalStore) -> None:
    app = create_app(settings(), llm=rok_script(), graphs={"sample": sample_graph})
    deep = ("[" * 5000 + "]" * 5000).encode("utf-16")
    with app.test_request_context():
        with pytest.raises(BadRequest, match="nested"):
            app.json.loads(deep)
        assert app.json.loads('{"a": [1]}'.encode("utf-16")) == {"a": [1]}


def test_checking_text_does_not_recurse() -> None:
    deep: list[object] = []
    inner = deep
    for _ in range(5000):
        inner.append([])
        inner = inner[0]  # type: ignore[assignment]
    inner.append("\ud800")
    with pytest.raises(BadRequest, match="not valid Unicode") as caught:
        check_text({"messages": deep}, "body")
    assert caught.value.message.startswith("body.messages[0][0]")

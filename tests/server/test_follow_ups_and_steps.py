"""Chat follow-ups resolved from the messages sent, and /v1/answer's step events."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from flask import Flask

from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app
from tests.server.conftest import LiveServer, settings
from tests.server.conversation_script import conversation_script

FIRST = "Which film did Kate Winslet and Leonardo DiCaprio star in?"


@pytest.fixture
def talking(serve: Callable[[Flask], LiveServer], sample_graph: LocalStore) -> LiveServer:
    return serve(create_app(settings(), llm=conversation_script(), graphs={"s": sample_graph}))


def ask(server: LiveServer, messages: list[dict[str, Any]], **extra: Any) -> httpx.Response:
    body = {"model": "kgmw-rok", "messages": messages, **extra}
    return httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=60)


def facts(body: dict[str, Any]) -> set[tuple[str, str, str]]:
    """Every evidence triple as (subject, relation, object) local names: the sample
    graph's IRIs end in the percent-encoded name."""
    triples = [hop["triple"] for path in body["evidence"]["paths"] for hop in path["hops"]]
    triples += body["evidence"]["triples"]

    def local(term: dict[str, str]) -> str:
        return unquote(term["value"].rsplit("/", 1)[-1])

    return {(local(t["subject"]), local(t["predicate"]), local(t["object"])) for t in triples}


def test_a_follow_up_carries_the_last_answer_into_its_evidence(talking: LiveServer) -> None:
    first = ask(talking, [{"role": "user", "content": FIRST}]).json()
    assert first["choices"][0]["message"]["content"].startswith("Titanic\n\nSources:")
    alone = ask(talking, [{"role": "user", "content": "and who directed it?"}]).json()
    assert ("Titanic", "directed_by", "James Cameron") not in facts(alone["kgmw"])
    follow = ask(
        talking,
        [
            {"role": "user", "content": FIRST},
            first["choices"][0]["message"],
            {"role": "user", "content": "and who directed it?"},
        ],
    ).json()
    body = follow["kgmw"]
    assert body["conversation"]["question"] == "Who directed Titanic?"
    assert [c["label"] for c in body["conversation"]["carried"]] == ["Titanic"]
    assert ("Titanic", "directed_by", "James Cameron") in facts(body)
    assert "Titanic —directed by→ James Cameron" in follow["choices"][0]["message"]["content"]


def test_follow_ups_can_be_turned_off(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    app = create_app(
        settings(chat_follow_ups=False), llm=conversation_script(), graphs={"s": sample_graph}
    )
    messages = [
        {"role": "user", "content": FIRST},
        {"role": "assistant", "content": "Titanic"},
        {"role": "user", "content": "and who directed it?"},
    ]
    body = ask(serve(app), messages).json()["kgmw"]
    assert "conversation" not in body and body["question"] == "and who directed it?"


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([{"role": "user", "content": 3}], "messages[0].content must be a string"),
        (["hello"], "messages[0] must be an object with a string 'role'"),
        ([{"content": "hi"}], "messages[0] must be an object"),
        ([{"role": "user", "content": [{"type": "image_url"}]}], "no text content"),
        ([{"role": "assistant", "content": "hi"}], "no message with role 'user'"),
        ({"role": "user"}, "'messages' must be a non-empty list"),
    ],
)
def test_malformed_messages_get_a_400_naming_the_message(
    talking: LiveServer, messages: Any, message: str
) -> None:
    response = ask(talking, messages)
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]


def read_events(response: httpx.Response) -> list[tuple[str, Any]]:
    events, name = [], None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            events.append((name, json.loads(line[6:])))
    return events


def stream_answer(
    server: LiveServer, body: dict[str, Any], **options: Any
) -> list[tuple[str, Any]]:
    with httpx.stream("POST", f"{server.url}/v1/answer", json=body, timeout=60, **options) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        return read_events(r)


def test_the_answer_streams_its_steps_then_the_answer_then_done(talking: LiveServer) -> None:
    events = stream_answer(
        talking, {"question": "Who directed Titanic?", "method": "rok"}, params={"stream": "true"}
    )
    names = [name for name, _ in events]
    assert names[-2:] == ["answer", "done"] and set(names[:-2]) == {"step"}
    steps = [data for name, data in events if name == "step"]
    answer = events[-2][1]
    ended = [s["step"] for s in steps if s["kind"] == "end"]
    assert ended == [step["name"] for step in answer["steps"]]
    assert [s["call"] for s in steps if s["kind"] == "llm"] == list(
        range(1, answer["usage"]["llm_calls"] + 1)
    )
    assert steps[0]["kind"] == "start"


def test_accept_event_stream_asks_for_the_stream_too(talking: LiveServer) -> None:
    events = stream_answer(
        talking,
        {"question": "Who directed Titanic?", "method": "io"},
        headers={"Accept": "text/event-stream"},
    )
    assert [name for name, _ in events][-2:] == ["answer", "done"]


def test_a_failing_answer_stream_ends_with_an_error_event(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    server = serve(create_app(settings(), llm=ScriptedLLM(), graphs={"s": sample_graph}))
    events = stream_answer(
        server, {"question": "Who directed Titanic?", "method": "io"}, params={"stream": "1"}
    )
    name, error = events[-1]
    assert name == "error" and "no scripted rule matches" in error["message"]
    assert error["status"] >= 400 and "done" not in [n for n, _ in events]


def test_a_bad_stream_flag_is_a_400(talking: LiveServer) -> None:
    response = httpx.post(
        f"{talking.url}/v1/answer",
        params={"stream": "maybe"},
        json={"question": "Who directed Titanic?"},
    )
    assert (
        response.status_code == 400 and "stream must be true or false" in response.json()["message"]
    )


def test_a_client_that_leaves_the_answer_stream_stops_the_llm_calls(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    from tests.cli_helpers import rok_script
    from tests.server.test_chat_streams import SlowScript, answer_jobs, wait_for_jobs

    script = rok_script()
    llm = SlowScript(script.rules, default=script.default)
    server = serve(create_app(settings(llm_cache=False), llm=llm, graphs={"s": sample_graph}))
    body = {"question": "Who directed Titanic?", "method": "rok"}
    before = answer_jobs()
    with httpx.stream(
        "POST", f"{server.url}/v1/answer", params={"stream": "true"}, json=body, timeout=60
    ) as response:
        next(response.iter_lines())  # the first step starts; then the client leaves
        job = answer_jobs() - before
    wait_for_jobs(job)  # the next step event finds the connection gone
    assert len(llm.calls) <= 3  # RoK needed 4 calls

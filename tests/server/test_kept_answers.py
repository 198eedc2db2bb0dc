"""GET /v1/answers/{id}: a chat completion's full answer, for the key that asked, while kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from flask import Flask

from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from tests.cli_helpers import rok_script
from tests.server.conftest import LiveServer, settings

QUESTION = {"role": "user", "content": "Who directed Titanic?"}


def chat(server: LiveServer, key: str | None = None, **extra: Any) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = {"model": "kgmw-rok", "messages": [QUESTION], **extra}
    response = httpx.post(
        f"{server.url}/v1/chat/completions", json=body, headers=headers, timeout=60
    )
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    return reply


def kept(server: LiveServer, answer_id: str, key: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.get(f"{server.url}/v1/answers/{answer_id}", headers=headers)


@pytest.fixture
def keyed(serve: Callable[[Flask], LiveServer], sample_graph: LocalStore) -> LiveServer:
    app = create_app(
        settings(server_api_keys="alice,bob"), llm=rok_script(), graphs={"s": sample_graph}
    )
    return serve(app)


def test_the_completion_id_fetches_the_full_answer(keyed: LiveServer) -> None:
    reply = chat(keyed, "alice")
    text = reply["choices"][0]["message"]["content"]
    assert text.endswith(f"(full answer: GET /v1/answers/{reply['id']})")
    found = kept(keyed, reply["id"], "alice")
    assert found.status_code == 200
    answer = found.json()
    assert answer["id"] == reply["id"] and answer["model"] == "kgmw-rok"
    assert answer["answer"] == "James Cameron" and answer["evidence"] == reply["kgmw"]["evidence"]
    assert answer["evidence_graph"]["nodes"]


def test_another_key_or_a_made_up_id_reads_the_same_404(keyed: LiveServer) -> None:
    reply = chat(keyed, "alice")
    theirs = kept(keyed, reply["id"], "bob")
    missing = kept(keyed, "chatcmpl-kgmw-" + "0" * 32, "bob")
    malformed = kept(keyed, "../../etc/passwd", "bob")
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json() == missing.json()
    assert malformed.status_code == 404
    assert kept(keyed, reply["id"]).status_code == 401


def test_an_open_service_serves_kept_answers_by_id_alone(scripted_server: LiveServer) -> None:
    reply = chat(scripted_server)
    assert kept(scripted_server, reply["id"]).json()["answer"] == "James Cameron"


def test_a_streamed_completion_is_kept_too(scripted_server: LiveServer) -> None:
    body = {"model": "kgmw-rok", "stream": True, "messages": [QUESTION]}
    with httpx.stream(
        "POST", f"{scripted_server.url}/v1/chat/completions", json=body, timeout=60
    ) as r:
        chunks = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: {")]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    answer_id = chunks[0]["id"]
    assert text.endswith(f"(full answer: GET /v1/answers/{answer_id})")
    assert kept(scripted_server, answer_id).json()["answer"] == "James Cameron"


def test_the_size_cap_evicts_older_answers(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    app = create_app(settings(answers_max_mb=0.05), llm=rok_script(), graphs={"s": sample_graph})
    server = serve(app)
    ids = [chat(server)["id"] for _ in range(6)]
    assert kept(server, ids[-1]).status_code == 200
    assert kept(server, ids[0]).status_code == 404


def test_sources_and_keeping_can_be_turned_off(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    app = create_app(
        settings(chat_sources=False, answers_ttl=0), llm=rok_script(), graphs={"s": sample_graph}
    )
    server = serve(app)
    reply = chat(server)
    assert reply["choices"][0]["message"]["content"] == "James Cameron"
    assert reply["kgmw"]["evidence"]["paths"]
    assert kept(server, reply["id"]).status_code == 404


def test_without_sources_a_withheld_answer_is_still_said_in_words(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    app = create_app(
        settings(chat_sources=False),
        llm=rok_script(answer="Ridley Scott"),
        graphs={"s": sample_graph},
    )
    server = serve(app)
    assert chat(server)["choices"][0]["message"]["content"] == "The graph does not hold the answer."
    assert chat(server, guess=True)["choices"][0]["message"]["content"] == (
        "The graph does not hold the answer.\n"
        "Best guess (not supported by the graph): Ridley Scott, confidence 0.2"
    )


def test_the_sources_section_is_capped(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    app = create_app(settings(chat_sources_max=1), llm=rok_script(), graphs={"s": sample_graph})
    text = chat(serve(app))["choices"][0]["message"]["content"]
    assert "\n[1] " in text and "\n[2] " not in text and "\n... and " in text


def test_an_unwritable_cache_folder_is_a_config_error_naming_the_fix(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore, tmp_path: Path
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    app = create_app(settings(cache_dir=str(blocked)), llm=rok_script(), graphs={"s": sample_graph})
    body = {"model": "kgmw-rok", "messages": [QUESTION]}
    response = httpx.post(f"{serve(app).url}/v1/chat/completions", json=body, timeout=60)
    assert response.status_code == 500
    message = response.json()["error"]["message"]
    assert "cannot keep chat answers in" in message and "answers_ttl = 0" in message

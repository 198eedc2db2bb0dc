"""The OpenAI-compatible backend against llama-cpp-python's real server, and a faulty one."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import ClassVar

import pytest

from middleware.errors import LLMError, LLMTimeout
from middleware.llm import LLMSession, OpenAICompatLLM, user
from tests.llm.conftest import start_llama_server

QUESTION = [user("Q: What is the capital of France?\nA:")]
CITIES = ["Berlin", "Paris", "Madrid", 'Zoë "the" city', "back\\slash"]


def test_complete_falls_back_to_completions_and_counts_usage(llama_server: str) -> None:
    llm = OpenAICompatLLM(base_url=llama_server, api="auto")
    session = LLMSession(llm)
    first = session.complete("a", [user("What is the capital of France?")], max_tokens=8)
    assert first.route in {"chat", "completions"}
    if first.route == "completions":  # the base model ended its chat turn at once
        assert llm.chat_works is False
        assert "empty reply" in llm.fallbacks[0]
    pinned = OpenAICompatLLM(base_url=llama_server, api="completions")
    done = LLMSession(pinned).complete("b", QUESTION, max_tokens=8, stop=["\n"])
    assert done.route == "completions" and done.text.strip()
    assert done.prompt_tokens > 5 and 0 < done.completion_tokens <= 8
    assert session.ledger.summary()["prompt_tokens"] == first.prompt_tokens > 0


@pytest.mark.parametrize("api", ["auto", "chat", "completions"])
def test_choose_returns_an_option_on_every_api(llama_server: str, api: str) -> None:
    llm = OpenAICompatLLM(base_url=llama_server, api=api)
    for options in (CITIES[:3], CITIES):
        choice = llm.choose([user("Which city is in France?")], options)
        assert choice.option in options and options[choice.index] == choice.option
        assert choice.completion.route in {"json_object", "chat_grammar", "grammar"}
        assert choice.completion.prompt_tokens > 0
    if api != "completions":
        assert "json_schema" in llm.unsupported  # this server refuses json_schema
        assert any("json_schema refused" in f for f in llm.fallbacks)


@pytest.mark.timeout(120)
def test_server_stopped_mid_test_gives_clear_error(model_file: Path) -> None:
    base, process = start_llama_server(model_file)
    llm = OpenAICompatLLM(base_url=base, api="completions", retries=2, backoff=0.05, timeout=10)
    assert llm.complete(QUESTION, max_tokens=2).text is not None
    process.terminate()
    process.wait(timeout=20)
    started = time.monotonic()
    with pytest.raises(LLMError) as caught:
        llm.complete(QUESTION, max_tokens=2)
    assert base in str(caught.value) and "cannot connect" in str(caught.value)
    assert time.monotonic() - started < 30  # bounded: 3 attempts with short backoff


class FaultyLLM(http.server.BaseHTTPRequestHandler):
    """Answers OpenAI-style requests badly on purpose, by path prefix."""

    hits: ClassVar[Counter[str]] = Counter()
    seen_keys: ClassVar[list[str]] = []
    seen_bodies: ClassVar[list[dict[str, object]]] = []

    def log_message(self, *args: object) -> None:
        pass

    def send(self, status: int, body: dict[str, object], **headers: str) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        with suppress(BrokenPipeError, ConnectionResetError):  # a timed-out client left
            self.wfile.write(data)

    def do_POST(self) -> None:
        mode = self.path.strip("/").split("/")[0]
        FaultyLLM.hits[mode] += 1
        FaultyLLM.seen_keys.append(self.headers.get("Authorization", ""))
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        FaultyLLM.seen_bodies.append(json.loads(body or b"{}"))
        ok = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "fake",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Paris"},
                }
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8},
        }
        if mode == "429-then-ok" and FaultyLLM.hits[mode] == 1:
            self.send(429, {"error": {"message": "slow down"}}, Retry_After="1")
        elif mode == "503":
            self.send(503, {"error": {"message": "overloaded"}}, Retry_After="0")
        elif mode == "429-long":
            self.send(429, {"error": {"message": "slow down"}}, Retry_After="3600")
        elif mode == "401":
            self.send(401, {"error": {"message": "Incorrect API key provided"}})
        elif mode == "hang":
            time.sleep(3)
            self.send(200, ok)
        else:
            self.send(200, ok)


@pytest.fixture(scope="module")
def faulty() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FaultyLLM)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def client(url: str, **kwargs: object) -> tuple[OpenAICompatLLM, list[float]]:
    waits: list[float] = []
    llm = OpenAICompatLLM(base_url=url, api="chat", sleep=waits.append, **kwargs)  # type: ignore[arg-type]
    return llm, waits


def test_retry_after_is_honoured(faulty: str) -> None:
    llm, waits = client(f"{faulty}/429-then-ok/v1", retries=2)
    assert llm.complete(QUESTION).text == "Paris"
    assert waits == [1.0]


def test_5xx_retried_then_clear_error(faulty: str) -> None:
    llm, waits = client(f"{faulty}/503/v1", retries=2, backoff=0.1)
    with pytest.raises(LLMError, match=r"failed on a chat completion after 3 attempts: HTTP 503"):
        llm.complete(QUESTION)
    assert waits == [0.0, 0.0]  # Retry-After: 0 wins over backoff


def test_retry_after_longer_than_allowed_fails_at_once(faulty: str) -> None:
    llm, waits = client(f"{faulty}/429-long/v1", retries=3, max_retry_wait=5)
    with pytest.raises(LLMError, match="retry after 3600 s"):
        llm.complete(QUESTION)
    assert waits == []


def test_bad_key_is_not_retried_and_never_shown(faulty: str) -> None:
    secret = "sk-test-very-secret-123"
    llm, waits = client(f"{faulty}/401/v1", api_key=secret, api_key_env="MY_KEY")
    with pytest.raises(LLMError) as caught:
        llm.complete(QUESTION)
    assert "$MY_KEY" in str(caught.value) and secret not in str(caught.value)
    assert secret not in json.dumps(caught.value.to_dict())
    assert waits == [] and FaultyLLM.seen_keys[-1] == f"Bearer {secret}"


def test_timeout_is_an_llm_timeout(faulty: str) -> None:
    llm, _ = client(f"{faulty}/hang/v1", retries=0, timeout=0.5)
    with pytest.raises(LLMTimeout, match="timed out"):
        llm.complete(QUESTION)


def test_seed_is_sent_only_when_given(faulty: str) -> None:
    llm, _ = client(f"{faulty}/ok/v1")
    llm.complete(QUESTION, temperature=0.7, seed=42)
    assert (FaultyLLM.seen_bodies[-1]["seed"], FaultyLLM.seen_bodies[-1]["temperature"]) == (
        42,
        0.7,
    )
    llm.complete(QUESTION)
    assert "seed" not in FaultyLLM.seen_bodies[-1]
    assert llm.choose(QUESTION, ["Paris", "Lyon"], temperature=0.5, seed=9).option == "Paris"
    assert FaultyLLM.seen_bodies[-1]["seed"] == 9


def test_bad_base_url() -> None:
    with pytest.raises(Exception, match="must start with http"):
        OpenAICompatLLM(base_url="localhost:8000")

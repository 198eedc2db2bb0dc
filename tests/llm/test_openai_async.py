"""OpenAICompatLLM's asyncio path: ``acomplete`` and ``achoose`` against a local
OpenAI-compatible stub, many calls in flight on one event loop without a thread each."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest

from middleware.errors import LLMError
from middleware.llm import OpenAICompatLLM, user
from middleware.llm.scripted import ScriptedLLM
from tests.openai_stub import OpenAIStub

T = TypeVar("T")
CITY = ScriptedLLM([("capital of France", "Paris")], default="Seine")


def on_loop(llm: OpenAICompatLLM, main: Callable[[], Awaitable[T]]) -> T:
    """``main()`` on a fresh event loop whose executor has two threads; the loop's
    client is closed before the loop ends."""

    async def run() -> T:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(2))
        try:
            return await main()
        finally:
            await llm.aclose()

    return asyncio.run(run())


def test_acomplete_answers_like_complete() -> None:
    with OpenAIStub(CITY) as stub:
        llm = OpenAICompatLLM(base_url=stub.url, api="chat")
        question = [user("What is the capital of France?")]
        done = on_loop(llm, lambda: llm.acomplete(question, max_tokens=8))
        assert done.text == "Paris" and done.route == "chat" and done.backend == "openai"
        assert done.text == llm.complete(question, max_tokens=8).text


def test_many_calls_wait_together_without_a_thread_each() -> None:
    """Twelve replies are held at a barrier of twelve, so they come back only if all
    twelve requests are in flight at once: more than the loop has threads (its own and
    an executor of two), so a waiting call holds none."""
    barrier = threading.Barrier(12, timeout=30)
    with OpenAIStub(CITY, hold=barrier.wait) as stub:
        llm = OpenAICompatLLM(base_url=stub.url, api="chat", retries=0)

        async def main() -> list[str]:
            calls = [llm.acomplete([user(f"capital of France {n}?")]) for n in range(12)]
            return [c.text for c in await asyncio.gather(*calls)]

        assert on_loop(llm, main) == ["Paris"] * 12
        assert stub.requests == 12 and not barrier.broken


def test_achoose_takes_the_json_schema_route() -> None:
    with OpenAIStub(CITY) as stub:
        llm = OpenAICompatLLM(base_url=stub.url, api="chat")
        choice = on_loop(llm, lambda: llm.achoose([user("Which river?")], ["Seine", "Alps"]))
        assert choice.option == "Seine" and choice.index == 0
        assert choice.completion.route == "json_schema"


def test_a_server_that_is_gone_is_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    llm = OpenAICompatLLM(base_url=f"http://127.0.0.1:{port}/v1", retries=0)
    with pytest.raises(LLMError, match="cannot connect"):
        on_loop(llm, lambda: llm.acomplete([user("hello")]))


def test_each_event_loop_gets_its_own_client() -> None:
    with OpenAIStub(CITY) as stub:
        llm = OpenAICompatLLM(base_url=stub.url, api="chat")
        for _ in range(2):  # a client bound to a closed loop would fail the second run
            done = on_loop(llm, lambda: llm.acomplete([user("capital of France?")]))
            assert done.text == "Paris"

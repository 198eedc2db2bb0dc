"""The OpenAI Python client against /v1/chat/completions: plain and streaming replies."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest
from flask import Flask

from middleware.kg.backends.local import LocalStore
from middleware.llm.local import EmbeddedLLM
from middleware.server import create_app
from tests.cli_helpers import rok_script
from tests.server.conftest import LiveServer, settings

QUESTION = "Who directed Titanic?"


def client(server: LiveServer, key: str = "none") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0, timeout=120)


def test_models_lists_one_model_per_method(scripted_server: LiveServer) -> None:
    ids = [model.id for model in client(scripted_server).models.list()]
    assert ids == [
        "kgmw",
        "kgmw-rok",
        "kgmw-pg",
        "kgmw-qsm",
        "kgmw-plan",
        "kgmw-ksl",
        "kgmw-ksl+plan",
        "kgmw-reach",
        "kgmw-io",
        "kgmw-cot",
        "kgmw-sc",
        "kgmw-rok+plan",
        "kgmw-pg+plan",
        "kgmw-qsm+plan",
    ]


def test_grounded_completion_cites_its_evidence(scripted_server: LiveServer) -> None:
    reply = client(scripted_server).chat.completions.create(
        model="kgmw-rok", messages=[{"role": "user", "content": QUESTION}]
    )
    text = reply.choices[0].message.content or ""
    assert text.startswith("James Cameron\n\nSources:\n[1] ")
    assert "Titanic —directed by→ James Cameron\n" in text
    assert text.endswith(f"(full answer: GET /v1/answers/{reply.id})")
    assert reply.choices[0].finish_reason == "stop"
    answer: dict[str, Any] = reply.model_extra["kgmw"]  # type: ignore[index]
    assert answer["method"] == "rok" and answer["grounded"]
    assert answer["usage"]["llm_calls"] == 4
    assert reply.usage is not None
    assert reply.usage.prompt_tokens == answer["usage"]["prompt_tokens"] > 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert {e["iri"] for e in answer["entities"]} == {
        "https://kgmw.dev/metaqa/entity/James%20Cameron"
    }


@pytest.fixture
def guessing_server(serve: Callable[[Flask], LiveServer], sample_graph: LocalStore) -> LiveServer:
    """RoK answering "Ridley Scott" about Titanic: nothing joins Titanic to him, so the
    answer is withheld and kept as the guess."""
    return serve(
        create_app(settings(), llm=rok_script(answer="Ridley Scott"), graphs={"s": sample_graph})
    )


def test_an_answer_the_graph_does_not_hold_is_said_with_its_evidence(
    guessing_server: LiveServer,
) -> None:
    reply = client(guessing_server).chat.completions.create(
        model="kgmw-rok", messages=[{"role": "user", "content": QUESTION}]
    )
    text = reply.choices[0].message.content or ""
    assert text.startswith("The graph does not hold the answer.\n\nSources:\n[1] ")
    assert "Ridley Scott" not in text and "null" not in text
    assert text.endswith(f"(full answer: GET /v1/answers/{reply.id})")
    answer: dict[str, Any] = reply.model_extra["kgmw"]  # type: ignore[index]
    assert answer["answer"] is None and answer["found"] is False
    assert answer["guess"]["answer"] == "Ridley Scott" and answer["support"] == []


def test_the_guess_comes_when_the_request_asks_for_it(guessing_server: LiveServer) -> None:
    asked = {"model": "kgmw-rok", "messages": [{"role": "user", "content": QUESTION}]}
    reply = client(guessing_server).chat.completions.create(**asked, extra_body={"guess": True})
    assert (reply.choices[0].message.content or "").startswith(
        "The graph does not hold the answer.\n"
        "Best guess (not supported by the graph): Ridley Scott, confidence 0.2\n\nSources:\n"
    )
    stream = client(guessing_server).chat.completions.create(
        **asked, stream=True, extra_body={"guess": True}
    )
    streamed = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert streamed.startswith("The graph does not hold the answer.\nBest guess (not supported")
    with pytest.raises(openai.BadRequestError, match="'guess' must be true or false"):
        client(guessing_server).chat.completions.create(**asked, extra_body={"guess": "yes"})


def test_the_support_is_listed_first(scripted_server: LiveServer) -> None:
    reply = client(scripted_server).chat.completions.create(
        model="kgmw-rok", messages=[{"role": "user", "content": QUESTION}]
    )
    answer: dict[str, Any] = reply.model_extra["kgmw"]  # type: ignore[index]
    assert [chain["text"] for chain in answer["support"]] == [
        "Titanic | directed by | James Cameron"
    ]
    text = reply.choices[0].message.content or ""
    assert text.startswith("James Cameron\n\nSources:\n[1] Titanic —directed by→ James Cameron\n")


def test_streaming_sends_chunks_then_done(scripted_server: LiveServer) -> None:
    stream = client(scripted_server).chat.completions.create(
        model="kgmw-rok",
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
        ],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("James Cameron\n\nSources:")
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert len(finals) == 1
    assert finals[0].model_extra["kgmw"]["answer"] == "James Cameron"  # type: ignore[index]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.prompt_tokens > 0


def test_sources_and_budget_travel_in_extra_body(scripted_server: LiveServer) -> None:
    with pytest.raises(openai.UnprocessableEntityError, match="budget"):
        client(scripted_server).chat.completions.create(
            model="kgmw-rok",
            messages=[{"role": "user", "content": QUESTION}],
            extra_body={"max_calls": 1},
        )
    with pytest.raises(openai.NotFoundError, match="no source named 'nowhere'"):
        client(scripted_server).chat.completions.create(
            model="kgmw-io",
            messages=[{"role": "user", "content": QUESTION}],
            extra_body={"sources": ["nowhere"]},
        )


def test_bad_requests_get_openai_shaped_errors(scripted_server: LiveServer) -> None:
    chat = client(scripted_server).chat.completions
    with pytest.raises(openai.NotFoundError, match="unknown model 'gpt-4o'"):
        chat.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
    with pytest.raises(openai.BadRequestError, match="no message with role 'user'"):
        chat.create(model="kgmw-io", messages=[{"role": "system", "content": "hi"}])


def test_a_failure_inside_a_stream_arrives_as_an_error_event(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    from middleware.llm.scripted import ScriptedLLM

    server = serve(create_app(settings(), llm=ScriptedLLM(), graphs={"sample": sample_graph}))
    stream = client(server).chat.completions.create(
        model="kgmw-io", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    with pytest.raises(openai.APIError, match="no scripted rule matches"):
        list(stream)


@pytest.mark.slow
def test_embedded_model_answers_through_the_openai_client(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore, embedded_llm: EmbeddedLLM
) -> None:
    """The real thing: the embedded Gemma behind RoK, asked through the OpenAI client."""
    server = serve(create_app(settings(), llm=embedded_llm, graphs={"sample": sample_graph}))
    reply = client(server).chat.completions.create(
        model="kgmw-rok", messages=[{"role": "user", "content": QUESTION}]
    )
    answer = reply.model_extra["kgmw"]  # type: ignore[index]
    assert answer["grounded"], answer["warnings"]
    evidence = answer["evidence"]
    assert evidence["paths"] or evidence["triples"], "RoK found no evidence in the sample graph"
    assert "Sources:" in (reply.choices[0].message.content or "")
    assert reply.usage is not None and reply.usage.completion_tokens > 0
    stream = client(server).chat.completions.create(
        model="kgmw-rok", messages=[{"role": "user", "content": QUESTION}], stream=True
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.strip() and "Sources:" in text
    final = next(c for c in chunks if c.choices and c.choices[0].finish_reason == "stop")
    assert final.model_extra["kgmw"]["grounded"]  # type: ignore[index]


def test_keep_alive_comments_flow_while_the_method_works(
    serve: Callable[[Flask], LiveServer],
    sample_graph: LocalStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from middleware.llm.scripted import ScriptedLLM
    from middleware.server.answering import chat

    def slow(prompt: str) -> str:
        time.sleep(0.3)
        return "James Cameron"

    monkeypatch.setattr(chat, "KEEP_ALIVE_SECONDS", 0.05)
    server = serve(
        create_app(settings(), llm=ScriptedLLM(default=slow), graphs={"s": sample_graph})
    )
    body = {"model": "kgmw-io", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
    with httpx.stream("POST", f"{server.url}/v1/chat/completions", json=body) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    assert lines[0].startswith("data: ") and '"role": "assistant"' in lines[0]
    assert ": kgmw is working on the answer" in lines[1:-1]
    assert lines[-1] == "data: [DONE]"
    content = [json.loads(line[6:]) for line in lines if line.startswith("data: {")]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in content if c["choices"])
    assert text.startswith("James Cameron")


def test_pseudo_graph_model_over_two_sources(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    """`kgmw-pg` with both sources named in extra_body: facts from each, tagged."""
    from tests.conftest import DATA

    films = LocalStore(profile=str(DATA / "multi" / "wikidata-local.yaml"), name="films")
    films.load([DATA / "multi" / "wikidata.ttl"])
    graphs = {"sample": sample_graph, "films": films}
    server = serve(create_app(settings(pg_threshold=0.3), llm=rok_script(), graphs=graphs))
    reply = client(server).chat.completions.create(
        model="kgmw-pg",
        messages=[{"role": "user", "content": QUESTION}],
        extra_body={"sources": ["sample", "films"]},
    )
    answer = reply.model_extra["kgmw"]  # type: ignore[index]
    assert answer["method"] == "pg" and answer["answer"] == "James Cameron"
    assert answer["sources"] == ["sample", "films"]
    assert {t["source"] for t in answer["evidence"]["triples"]} == {"sample", "films"}
    assert "(films)" in (reply.choices[0].message.content or "")

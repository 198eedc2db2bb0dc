"""/v1/answer, /v1/sources, the probes, /metrics and /openapi.json."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from flask import Flask

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app
from middleware.server.state import ServiceState
from tests.cli_helpers import rok_script
from tests.server.conftest import LiveServer, settings
from tests.server.prometheus_text import figure

QUESTION = "Who directed Titanic?"
# each test's service opens the encoder on its first answer: seconds on a busy machine
HTTP = httpx.Client(timeout=120)


def test_answer_returns_the_answer_json_with_an_evidence_graph(
    scripted_server: LiveServer,
) -> None:
    body = HTTP.post(f"{scripted_server.url}/v1/answer", json={"question": QUESTION}).json()
    assert body["answer"] == "James Cameron"
    assert body["method"] == "rok" and body["grounding"] == "paths"
    assert body["usage"]["llm_calls"] == 4 and body["usage"]["sparql_queries"] > 0
    assert [s["name"] for s in body["steps"]][:2] == ["expand", "extract"]
    graph = body["evidence_graph"]
    labels = {n["label"] for n in graph["nodes"]}
    assert {"Titanic", "James Cameron"} <= labels
    answers = [n["label"] for n in graph["nodes"] if n["answer"]]
    assert answers == ["James Cameron"]
    assert {"source", "target", "label", "role", "graph"} <= set(graph["edges"][0])
    assert any(e["label"] == "directed by" for e in graph["edges"])
    titanic = next(n for n in graph["nodes"] if n["label"] == "Titanic")
    assert titanic["iri"] == titanic["id"] == "https://kgmw.dev/metaqa/entity/Titanic"
    directed = next(e for e in graph["edges"] if e["label"] == "directed by")
    assert directed["predicate"] == "https://kgmw.dev/metaqa/relation/directed_by"


def test_answer_with_choices_and_a_named_method(scripted_server: LiveServer) -> None:
    body = HTTP.post(
        f"{scripted_server.url}/v1/answer",
        json={"question": QUESTION, "method": "io", "choices": ["James Cameron", "Kate Winslet"]},
    ).json()
    assert body["method"] == "io"
    assert body["choices"] == ["James Cameron", "Kate Winslet"]


@pytest.mark.parametrize(
    ("payload", "status", "message"),
    [
        ({}, 400, "request: 'question' must be a non-empty string"),
        ({"question": "  "}, 400, "request: 'question' must be a non-empty string"),
        ({"question": QUESTION, "colour": "red"}, 400, "unknown field(s) colour"),
        (
            {"question": QUESTION, "max_calls": 0},
            400,
            "request: 'max_calls' must be a positive integer",
        ),
        ({"question": QUESTION, "method": "magic"}, 400, "unknown method 'magic'"),
        ({"question": QUESTION, "sources": ["nowhere"]}, 404, "no source named 'nowhere'"),
        ({"question": QUESTION, "max_calls": 1}, 422, "budget"),
        ({"question": "x" * 2500}, 400, "the question has 2500 characters, more than 2000"),
    ],
)
def test_answer_refuses_bad_requests_clearly(
    scripted_server: LiveServer, payload: dict[str, object], status: int, message: str
) -> None:
    response = HTTP.post(f"{scripted_server.url}/v1/answer", json=payload)
    assert response.status_code == status
    assert message in response.json()["message"]


def test_answer_needs_a_json_object(scripted_server: LiveServer) -> None:
    text = HTTP.post(f"{scripted_server.url}/v1/answer", content="question=hi")
    array = HTTP.post(f"{scripted_server.url}/v1/answer", json=["hi"])
    broken = HTTP.post(
        f"{scripted_server.url}/v1/answer",
        content="{not json",
        headers={"Content-Type": "application/json"},
    )
    assert text.status_code == array.status_code == broken.status_code == 400
    assert "application/json" in text.json()["hint"]


def test_rok_over_two_sources_is_refused_with_a_hint(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    graphs = {"one": sample_graph, "two": LocalStore()}
    server = serve(create_app(settings(), llm=rok_script(), graphs=graphs))
    response = HTTP.post(
        f"{server.url}/v1/answer", json={"question": QUESTION, "sources": ["one", "two"]}
    )
    assert response.status_code == 400
    assert "rok works inside one graph" in response.json()["message"]
    io = HTTP.post(
        f"{server.url}/v1/answer",
        json={"question": QUESTION, "method": "io", "sources": ["two"]},
    )
    assert io.status_code == 200


def test_sources_never_show_credentials() -> None:
    state = ServiceState(
        settings(endpoint="https://user:secret@sparql.example/query", profile="wikidata")
    )
    described = state.describe_source("default")
    assert described == {
        "name": "default",
        "kind": "endpoint",
        "profile": "wikidata",
        "default": True,
        "endpoint": "https://sparql.example/query",
    }


def test_sources_name_the_path_memory_and_its_checksum(
    sample_graph: LocalStore, tmp_path: Path
) -> None:
    memory = tmp_path / "memory.json"
    app = create_app(
        settings(plan_memory=str(memory), server_api_keys="k"),
        llm=ScriptedLLM(default="x"),
        graphs={"s": sample_graph},
    )
    client = app.test_client()

    def reported() -> dict[str, object]:
        found = client.get("/v1/sources", headers={"Authorization": "Bearer k"}).get_json()
        return dict(found["sources"][0]["plan_memory"])

    assert reported() == {"path": str(memory), "sha256": None}  # not learned yet
    memory.write_text('{"entries": []}')
    assert reported()["sha256"] == hashlib.sha256(memory.read_bytes()).hexdigest()
    memory.write_text('{"entries": [], "again": 1}')  # rewritten: the digest follows
    assert reported()["sha256"] == hashlib.sha256(memory.read_bytes()).hexdigest()
    kept = memory.stat()
    memory.write_text('{"entries": [], "again": 2}')  # same size, old modification time
    os.utime(memory, ns=(kept.st_atime_ns, kept.st_mtime_ns))
    assert reported()["sha256"] == hashlib.sha256(memory.read_bytes()).hexdigest()


def test_healthz_readyz_and_a_failing_source(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    healthy = serve(
        create_app(settings(), llm=ScriptedLLM(default="yes"), graphs={"s": sample_graph})
    )
    assert HTTP.get(f"{healthy.url}/healthz").json() == {"status": "ok"}
    ready = HTTP.get(f"{healthy.url}/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    assert set(ready.json()["checks"]) == {"source:s", "llm"}
    dead = SparqlEndpoint("http://127.0.0.1:9/sparql", retries=0, timeout=2)
    failing = serve(
        create_app(
            settings(), llm=ScriptedLLM(default="yes"), graphs={"s": sample_graph, "dead": dead}
        )
    )
    response = HTTP.get(f"{failing.url}/readyz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["source:s"]["ok"] and not checks["source:dead"]["ok"]
    assert "EndpointError" in checks["source:dead"]["error"]


def test_metrics_count_requests_answers_tokens_and_errors(scripted_server: LiveServer) -> None:
    HTTP.post(f"{scripted_server.url}/v1/answer", json={"question": QUESTION})
    HTTP.get(f"{scripted_server.url}/sparql", params={"query": "DROP ALL"})
    HTTP.get(f"{scripted_server.url}/sparql", params={"query": "ASK {}"})  # the fast path
    text = HTTP.get(f"{scripted_server.url}/metrics").text
    requests = "kgmw_http_requests_total"
    assert figure(text, requests, route="/v1/answer", method="POST", status="200") == 1
    assert figure(text, requests, route="/sparql", method="GET", status="400") == 1
    assert figure(text, requests, route="/sparql", method="GET", status="200") == 1
    assert figure(text, "kgmw_http_request_duration_seconds_count", route="/sparql") == 2
    assert figure(text, "kgmw_llm_calls_total", method="rok") == 4
    assert figure(text, "kgmw_answers_total", method="rok") == 1
    assert (figure(text, "kgmw_llm_tokens_total", method="rok", kind="prompt") or 0) > 0
    assert figure(text, "kgmw_errors_total", error="ReadOnlyViolation") == 1
    assert figure(text, "kgmw_http_request_duration_seconds_count", route="/v1/answer") == 1
    assert (figure(text, "kgmw_sparql_queries_total", via="rok") or 0) > 0
    assert figure(text, "kgmw_sparql_queries_total", via="proxy:sample") == 1
    assert "# TYPE kgmw_http_request_duration_seconds histogram" in text
    assert "# TYPE kgmw_http_requests_total counter" in text


def test_openapi_describes_every_route(scripted_server: LiveServer) -> None:
    document = HTTP.get(f"{scripted_server.url}/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    app = scripted_server.app
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = rule.rule.replace("<path:name>", "{name}")
        path = re.sub(r"<(\w+)>", r"{\1}", path)
        assert path in document["paths"], path
        for verb in rule.methods - {"HEAD", "OPTIONS"}:  # type: ignore[operator]
            assert verb.lower() in document["paths"][path], (path, verb)


def test_openapi_names_every_method_and_model() -> None:
    from middleware.methods.registry import METHODS
    from middleware.server.openapi_schemas import SCHEMAS

    method = SCHEMAS["AnswerRequest"]["properties"]["method"]["description"]
    model = SCHEMAS["ChatRequest"]["properties"]["model"]["description"]
    for name in METHODS:
        assert re.search(rf"(^|[ ,]){re.escape(name)}($|[ ,])", method), name
        assert f"kgmw-{name}" in model, name


def _schema_check(server: LiveServer, name: str) -> Callable[[Any], None]:
    """Validates a body against the service's own OpenAPI schema ``name``."""
    document = HTTP.get(f"{server.url}/openapi.json").json()
    schema = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    validator = jsonschema.Draft202012Validator(schema)

    def check(body: Any) -> None:
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
        assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]

    return check


def _streamed_answer(server: LiveServer, payload: dict[str, Any]) -> Any:
    with HTTP.stream(
        "POST", f"{server.url}/v1/answer?stream=true", json=payload, timeout=60
    ) as response:
        blocks = "".join(response.iter_text()).split("\n\n")
    [answer] = [b.split("data: ", 1)[1] for b in blocks if b.startswith("event: answer\n")]
    return json.loads(answer)


def test_answers_match_the_openapi_schema(scripted_server: LiveServer) -> None:
    check = _schema_check(scripted_server, "Answer")
    body = HTTP.post(f"{scripted_server.url}/v1/answer", json={"question": QUESTION}).json()
    assert body["found"] is True and body["guess"] is None and body["support"]
    check(body)
    check(_streamed_answer(scripted_server, {"question": QUESTION}))
    io = {"question": QUESTION, "method": "io"}
    check(HTTP.post(f"{scripted_server.url}/v1/answer", json=io).json())


def test_an_answer_the_graph_does_not_hold_matches_the_openapi_schema(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    """answer null, found false, the guess; the chat completion's kgmw body too."""
    app = create_app(
        settings(), llm=rok_script(answer="Ridley Scott"), graphs={"sample": sample_graph}
    )
    server = serve(app)
    check = _schema_check(server, "Answer")
    body = HTTP.post(f"{server.url}/v1/answer", json={"question": QUESTION}).json()
    assert body["answer"] is None and body["found"] is False
    assert body["guess"]["answer"] == "Ridley Scott" and body["support"] == []
    check(body)
    streamed = _streamed_answer(server, {"question": QUESTION})
    assert streamed["answer"] is None and streamed["guess"]["answer"] == "Ridley Scott"
    check(streamed)
    chat = {"model": "kgmw-rok", "messages": [{"role": "user", "content": QUESTION}]}
    completion = HTTP.post(f"{server.url}/v1/chat/completions", json=chat, timeout=60).json()
    _schema_check(server, "ChatCompletion")(completion)
    kept = HTTP.get(f"{server.url}/v1/answers/{completion['id']}").json()
    check(kept)


def test_page_and_its_assets_are_served_by_the_app(scripted_server: LiveServer) -> None:
    page = HTTP.get(f"{scripted_server.url}/")
    assert page.status_code == 200 and 'id="graph"' in page.text
    assert "http" not in page.text.split("<body>")[0].replace("http-equiv", "")
    for asset in ("app.js", "app.css", "vendor/cytoscape.min.js"):
        response = HTTP.get(f"{scripted_server.url}/static/{asset}")
        assert response.status_code == 200 and response.text


def test_steps_can_be_redacted(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    app = create_app(
        settings(server_redact_steps=True), llm=rok_script(), graphs={"sample": sample_graph}
    )
    server = serve(app)
    body = HTTP.post(
        f"{server.url}/v1/answer", json={"question": "Who directed Titanic?"}, timeout=60
    ).json()
    assert body["answer"] and body["steps"]
    assert all(s["prompt"] is None and s["raw"] is None for s in body["steps"])
    assert any(s["llm_calls"] for s in body["steps"])  # the costs stay
    chat = HTTP.post(
        f"{server.url}/v1/chat/completions",
        json={
            "model": "kgmw-rok",
            "messages": [{"role": "user", "content": "Who directed Titanic?"}],
        },
        timeout=60,
    ).json()
    assert all(s["prompt"] is None for s in chat["kgmw"]["steps"])

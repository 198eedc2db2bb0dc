"""API keys, body limits, rate limits, CORS and the one error handler, over real HTTP."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import httpx
import openai
import pytest
from flask import Flask

from middleware.errors import RateLimited
from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from middleware.server.guard import ApiKeys
from middleware.server.rate_limits import RequestLimits
from tests.cli_helpers import rok_script
from tests.server.conftest import LiveServer, settings

ASK = {"question": "Who directed Titanic?", "method": "io"}


@pytest.fixture
def keyed(serve: Callable[[Flask], LiveServer], sample_graph: LocalStore) -> LiveServer:
    app = create_app(
        settings(server_api_keys="first-key, second-key"),
        llm=rok_script(),
        graphs={"sample": sample_graph},
    )
    return serve(app)


def test_missing_or_wrong_api_key_gets_401(keyed: LiveServer) -> None:
    missing = httpx.post(f"{keyed.url}/v1/answer", json=ASK)
    wrong = httpx.post(f"{keyed.url}/v1/answer", json=ASK, headers={"Authorization": "Bearer nope"})
    basic = httpx.post(
        f"{keyed.url}/v1/answer", json=ASK, headers={"Authorization": "Basic Zmlyc3Qta2V5"}
    )
    for response in (missing, wrong, basic):
        assert response.status_code == 401
        assert response.json()["error"] == "unauthorized"
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert missing.json()["hint"] == "send the header 'Authorization: Bearer YOUR_KEY'"
    sparql = httpx.get(f"{keyed.url}/sparql", params={"query": "ASK {}"})
    assert sparql.status_code == 401
    with pytest.raises(openai.AuthenticationError, match="not valid"):
        openai.OpenAI(base_url=f"{keyed.url}/v1", api_key="nope", max_retries=0).models.list()


def test_a_valid_key_is_let_in_and_probes_stay_open(keyed: LiveServer) -> None:
    ok = httpx.post(
        f"{keyed.url}/v1/answer", json=ASK, headers={"Authorization": "Bearer second-key"}
    )
    assert ok.status_code == 200 and ok.json()["answer"]
    for path in ("/healthz", "/openapi.json", "/"):
        assert httpx.get(f"{keyed.url}{path}").status_code == 200, path
    assert httpx.get(f"{keyed.url}/metrics").status_code == 401


def test_api_keys_compare_whole_keys() -> None:
    keys = ApiKeys.parse("abc")
    with pytest.raises(Exception, match="not valid"):
        keys.caller("Bearer ab")
    with pytest.raises(Exception, match="not valid"):
        keys.caller("Bearer abcd")
    assert keys.caller("bearer  abc ") == "key:sha256:" + hashlib.sha256(b"abc").hexdigest()[:16]
    assert not ApiKeys.parse(" , ").enabled


def test_oversized_body_gets_413(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    server = serve(
        create_app(settings(server_max_body=2048), llm=rok_script(), graphs={"s": sample_graph})
    )
    big = {"question": "x" * 5000}
    response = httpx.post(f"{server.url}/v1/answer", json=big)
    assert response.status_code == 413
    assert response.json()["error"] == "payload_too_large"
    assert "more than 2048" in response.json()["message"]
    sparql = httpx.post(
        f"{server.url}/sparql",
        content="SELECT * {}" + " " * 4000,
        headers={"Content-Type": "application/sparql-query"},
    )
    assert sparql.status_code == 413
    # a body without Content-Length (chunked) is cut by Flask's own limit, same answer
    chunks = (b"x" * 1024 for _ in range(8))
    chunked = httpx.post(
        f"{server.url}/sparql",
        content=chunks,
        headers={"Content-Type": "application/sparql-query"},
    )
    assert chunked.status_code == 413
    assert chunked.json()["status"] == 413


def test_rate_limit_answers_429_with_retry_after(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    server = serve(
        create_app(settings(server_rate_limit=3), llm=rok_script(), graphs={"s": sample_graph})
    )
    statuses = [httpx.get(f"{server.url}/v1/sources").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    limited = httpx.get(f"{server.url}/v1/sources")
    assert limited.json()["error"] == "rate_limited"
    assert int(limited.headers["retry-after"]) >= 1
    assert httpx.get(f"{server.url}/healthz").status_code == 200  # probes are never limited


def test_request_limits_keep_callers_and_failures_apart() -> None:
    limits = RequestLimits(Flask("limits"), per_minute=2, auth_failures=1)
    limits.check("key:1")
    limits.check("key:1")
    with pytest.raises(RateLimited) as caught:
        limits.check("key:1")
    assert 1 <= (caught.value.retry_after or 0) <= 60
    assert "2 requests a minute" in caught.value.message
    limits.check("key:2")  # callers have their own allowance
    # failures are counted apart from requests; the last allowed one says how long the
    # address is to be refused
    assert 1 <= limits.count_failure("addr:10.0.0.1") <= 60
    off = RequestLimits(Flask("off"), per_minute=0, auth_failures=0)
    for _ in range(100):
        off.check("key:1")
        assert off.count_failure("addr:10.0.0.1") == 0


def test_the_fast_path_keeps_the_rate_limit(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    server = serve(
        create_app(settings(server_rate_limit=2), llm=rok_script(), graphs={"s": sample_graph})
    )
    ask = {"query": "ASK {}"}
    statuses = [httpx.get(f"{server.url}/sparql", params=ask).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    limited = httpx.get(f"{server.url}/sparql", params=ask)
    assert limited.json()["error"] == "rate_limited"
    assert int(limited.headers["retry-after"]) >= 1
    # the fast path and the routes spend one allowance
    assert httpx.get(f"{server.url}/v1/sources").status_code == 429


def test_cors_is_off_by_default_and_on_when_configured(
    scripted_server: LiveServer, serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    origin = {"Origin": "https://app.example"}
    closed = httpx.get(f"{scripted_server.url}/v1/sources", headers=origin)
    assert "access-control-allow-origin" not in closed.headers
    server = serve(
        create_app(
            settings(server_cors_origins="https://app.example"),
            llm=rok_script(),
            graphs={"s": sample_graph},
        )
    )
    opened = httpx.get(f"{server.url}/v1/sources", headers=origin)
    assert opened.headers["access-control-allow-origin"] == "https://app.example"
    preflight = httpx.options(  # as a browser asks before a POST with a key
        f"{server.url}/v1/answer",
        headers={
            **origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, x-other",
        },
    )
    assert preflight.status_code == 204
    allowed = preflight.headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed and "content-type" in allowed and "x-other" not in allowed
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert preflight.headers["access-control-allow-origin"] == "https://app.example"
    other = httpx.get(f"{server.url}/v1/sources", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers


def test_cors_preflight_needs_no_key_and_any_origin_gets_a_wildcard(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    server = serve(
        create_app(
            settings(server_cors_origins="*", server_api_keys="k"),
            llm=rok_script(),
            graphs={"s": sample_graph},
        )
    )
    origin = {"Origin": "https://anywhere.example"}
    preflight = httpx.options(
        f"{server.url}/v1/answer", headers={**origin, "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == "*"
    refused = httpx.get(f"{server.url}/v1/sources", headers=origin)  # no key: 401, readable
    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == "*"


class _Broken(LocalStore):
    """Fails inside the service, before an executor is given the query."""

    def content_version(self) -> tuple[int, int]:
        raise RuntimeError("secret internals /etc/passwd")


def test_unexpected_errors_are_json_without_a_traceback(
    serve: Callable[[Flask], LiveServer],
) -> None:
    server = serve(create_app(settings(), llm=rok_script(), graphs={"broken": _Broken()}))
    response = httpx.get(f"{server.url}/sparql", params={"query": "ASK {}"})
    assert response.status_code == 500
    body = response.json()
    assert body["error"] == "internal_error"
    assert "incident" in body["message"]
    assert "secret" not in response.text and "Traceback" not in response.text
    unknown = httpx.get(f"{server.url}/no/such/route")
    assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
    wrong_method = httpx.delete(f"{server.url}/v1/answer")
    assert wrong_method.status_code == 405 and wrong_method.json()["status"] == 405


def test_failed_authentication_is_rate_limited_per_address(
    serve: Callable[[Flask], LiveServer], sample_graph: LocalStore
) -> None:
    app = create_app(
        settings(server_api_keys="good-key", server_auth_failures=3),
        llm=rok_script(),
        graphs={"sample": sample_graph},
    )
    server = serve(app)
    bad = {"Authorization": "Bearer guess"}
    statuses = [httpx.get(f"{server.url}/v1/models", headers=bad).status_code for _ in range(5)]
    assert statuses == [401, 401, 401, 429, 429]
    blocked = httpx.get(f"{server.url}/v1/models", headers={"Authorization": "Bearer good-key"})
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) > 0
    assert "failed authentications a minute" in blocked.text

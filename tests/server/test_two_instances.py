"""Two `kgmw serve` processes on their own ports, one real Redis: one service."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.cli_helpers import rok_script
from tests.kg.test_sparql_guard import CRASHERS
from tests.openai_stub import OpenAIStub
from tests.redis_server import RedisServer
from tests.server.test_cli_serve import start
from tests.waiting import PATIENCE, until

KEYS = {name: {"Authorization": f"Bearer {name}"} for name in ("key-a", "key-b", "key-c")}
PER_MINUTE = 6


@pytest.fixture
def instances(redis_server: RedisServer, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The URLs of two instances sharing ``redis_server``, each with its own cache folder
    (as two hosts would have), answering with RoK's scripted replies."""
    with OpenAIStub(rok_script()) as stub, ExitStack() as stack:
        urls = []
        for name in ("a", "b"):
            env = dict(os.environ)
            env |= {
                "KGMW_SERVER_API_KEYS": ",".join(KEYS),
                "KGMW_SERVER_RATE_LIMIT": str(PER_MINUTE),
                "KGMW_SERVER_STATE_URL": "env:KGMW_TEST_REDIS_URL",
                "KGMW_TEST_REDIS_URL": redis_server.url,
                "KGMW_SPARQL_PENALTY": "60",
                "KGMW_LLM": "openai",
                "KGMW_LLM_BASE_URL": stub.url,
                "KGMW_LLM_CACHE": "false",
                "KGMW_PROGRESS": "false",
                "KGMW_CACHE_DIR": str(tmp_path / f"cache-{name}"),
            }
            url, _ = stack.enter_context(start([], env))
            urls.append(url)
        yield urls[0], urls[1]


def _get(url: str, key: str, path: str = "/v1/sources", **params: str) -> httpx.Response:
    return httpx.get(url + path, headers=KEYS[key], params=params, timeout=PATIENCE)


@pytest.mark.slow
def test_two_instances_behave_as_one_service(
    instances: tuple[str, str], redis_server: RedisServer
) -> None:
    a, b = instances

    # a key's limit of N a minute holds across both: the N+1th is a 429 at either
    statuses = [_get(url, "key-c").status_code for url in (a, b) * (PER_MINUTE // 2)]
    assert statuses == [200] * PER_MINUTE
    for url in (a, b):
        refused = _get(url, "key-c")
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1

    # an answer given by A is read at B with the same key, and is a 404 with another
    question = {
        "model": "kgmw-rok",
        "messages": [{"role": "user", "content": "Who directed Titanic?"}],
    }
    given = httpx.post(
        f"{a}/v1/chat/completions", json=question, headers=KEYS["key-a"], timeout=PATIENCE
    )
    assert given.status_code == 200, given.text
    answer_id = given.json()["id"]
    kept = _get(b, "key-a", f"/v1/answers/{answer_id}")
    assert kept.status_code == 200
    assert kept.json()["answer"] == given.json()["kgmw"]["answer"]
    assert _get(b, "key-b", f"/v1/answers/{answer_id}").status_code == 404

    # a caller penalised by strikes at both is held at both
    deep = {"query": CRASHERS["nested braces"]}
    for url in (a, b, a, b):  # four crashers: past the three allowed, counted together
        crashed = httpx.post(f"{url}/sparql", data=deep, headers=KEYS["key-b"], timeout=PATIENCE)
        assert crashed.status_code == 400
    for url in (a, b):
        assert until(
            lambda url=url: _get(url, "key-b", "/sparql", query="ASK {}").status_code == 429
        )
    assert _get(a, "key-a", "/sparql", query="ASK {}").status_code == 200  # nobody else

    # Redis stopped: both answer 503 and stay up; restarted: both serve again
    redis_server.stop()
    for url in (a, b):
        refused = _get(url, "key-a")
        assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
        assert httpx.get(f"{url}/healthz", timeout=PATIENCE).status_code == 200
    redis_server.start()
    for url in (a, b):
        assert until(lambda url=url: _get(url, "key-a").status_code == 200)

"""API keys limited to some sources and methods ([keys.NAME] tables of kgmw.toml)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from middleware.config import Settings
from middleware.errors import ConfigError
from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from tests.cli_helpers import rok_script

ANALYST = "analyst-secret"
CONFIG = f"""
server_api_keys = "full-key"
method = "rok"

[keys.analyst]
token_sha256 = "{hashlib.sha256(ANALYST.encode()).hexdigest()}"
sources = ["sample"]
methods = ["rok"]

[keys.reader]
token = "reader-secret"
methods = []

[keys.outsider]
token = "outsider-secret"
sources = ["other"]
"""


def _settings(tmp_path: Path, text: str = CONFIG) -> Settings:
    path = tmp_path / "kgmw.toml"
    path.write_text(text)
    return Settings.load(config_path=path, env={}, overrides={"progress": False})


def _client(tmp_path: Path, sample_graph: LocalStore):  # type: ignore[no-untyped-def]
    graphs = {"sample": sample_graph, "other": sample_graph}
    return create_app(_settings(tmp_path), llm=rok_script(), graphs=graphs).test_client()


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_limited_key_uses_only_its_sources(tmp_path: Path, sample_graph: LocalStore) -> None:
    client = _client(tmp_path, sample_graph)
    ask = {"query": "ASK { ?s ?p ?o }"}
    assert client.get("/sparql", query_string=ask, headers=_as(ANALYST)).status_code == 200
    refused = client.get("/sparql", query_string={**ask, "source": "other"}, headers=_as(ANALYST))
    assert refused.status_code == 403
    assert refused.get_json()["error"] == "forbidden" and "sample" in refused.get_json()["hint"]
    assert (
        client.get(
            "/sparql", query_string={**ask, "source": "other"}, headers=_as("full-key")
        ).status_code
        == 200
    )
    listed = client.get("/v1/sources", headers=_as(ANALYST)).get_json()["sources"]
    assert [s["name"] for s in listed] == ["sample"]
    assert len(client.get("/v1/sources", headers=_as("full-key")).get_json()["sources"]) == 2
    outsider = client.get("/v1/sources", headers=_as("outsider-secret")).get_json()
    assert outsider["default"] is None  # not even the default source's name
    assert [s["name"] for s in outsider["sources"]] == ["other"]


def test_a_limited_key_uses_only_its_methods(tmp_path: Path, sample_graph: LocalStore) -> None:
    client = _client(tmp_path, sample_graph)
    question = {"question": "Which films did James Cameron direct?"}
    refused = client.post("/v1/answer", json={**question, "method": "pg"}, headers=_as(ANALYST))
    assert refused.status_code == 403 and "method 'pg'" in refused.get_json()["message"]
    other = client.post("/v1/answer", json={**question, "sources": ["other"]}, headers=_as(ANALYST))
    assert other.status_code == 403
    assert client.post("/v1/answer", json=question, headers=_as(ANALYST)).status_code == 200
    models = [m["id"] for m in client.get("/v1/models", headers=_as(ANALYST)).get_json()["data"]]
    assert models == ["kgmw", "kgmw-rok"]
    chat = {"model": "kgmw-pg", "messages": [{"role": "user", "content": "Who?"}]}
    assert client.post("/v1/chat/completions", json=chat, headers=_as(ANALYST)).status_code == 403
    reader = client.post("/v1/answer", json=question, headers=_as("reader-secret"))
    assert reader.status_code == 403  # methods = []: the proxy only
    assert (
        client.get(
            "/sparql", query_string={"query": "ASK {}"}, headers=_as("reader-secret")
        ).status_code
        == 200
    )


@pytest.mark.parametrize(
    ("table", "complaint"),
    [
        ('[keys.x]\nsources = ["a"]', "exactly one of token and token_sha256"),
        ('[keys.x]\ntoken = "t"\ntoken_sha256 = "00"', "exactly one of token and token_sha256"),
        ('[keys.x]\ntoken_sha256 = "xyz"', "64 hex digits"),
        ('[keys.x]\ntoken = "t"\nsource = ["a"]', "unknown field(s) source"),
        ('[keys.x]\ntoken = "t"\nmethods = "rok"', "methods must be a list"),
        ('[keys]\nx = "t"', "one table per key"),
    ],
)
def test_a_broken_keys_table_is_a_clear_config_error(
    tmp_path: Path, table: str, complaint: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _settings(tmp_path, table)
    assert complaint in str(caught.value)

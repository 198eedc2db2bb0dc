"""Endpoint credentials through the CLI: a named source with Basic auth from the
environment, and no secret in any output, error, answer step or settings listing."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from middleware import workspace as workspace_module
from tests.auth_proxy import AuthProxy, auth_proxy
from tests.cli_helpers import rok_script, run
from tests.conftest import free_port

SECRET = "s3cret-Pa55"


@pytest.fixture
def proxy(oxigraph_server: str) -> Iterator[AuthProxy]:
    basic = "Basic " + base64.b64encode(f"alice:{SECRET}".encode()).decode()
    with auth_proxy(oxigraph_server, {"Authorization": basic}) as running:
        yield running


@pytest.fixture
def config(tmp_path: Path, proxy: AuthProxy, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("FILMS_PASSWORD", SECRET)
    path = tmp_path / "kgmw.toml"
    path.write_text(
        f'[sources.secure]\nendpoint = "{proxy.url}"\nendpoint_user = "alice"\n'
        'endpoint_password = "env:FILMS_PASSWORD"\nretries = 0\n\n'
        f'[sources.open]\nendpoint = "{proxy.url}"\nretries = 0\n'
    )
    return str(path)


def test_named_source_with_basic_auth(capsys: pytest.CaptureFixture[str], config: str) -> None:
    code, out, err = run(capsys, "--config", config, "neighbors", "Titanic", "--source", "secure")
    assert code == 0 and "James Cameron" in out, err
    code, _, err = run(capsys, "--config", config, "neighbors", "Titanic", "--source", "open")
    assert code == 1 and "HTTP 401" in err and "endpoint_user" in err


def test_doctor_checks_a_named_source(
    capsys: pytest.CaptureFixture[str], config: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGMW_ENCODER", "hash")
    args = ["--config", config, "doctor", "--no-llm", "--json", "--source"]
    code, out, _ = run(capsys, *args, "secure")
    source = next(c for c in json.loads(out)["checks"] if c["part"] == "source")
    assert code == 0 and source["ok"] is True and SECRET not in out
    code, out, _ = run(capsys, *args, "open")
    source = next(c for c in json.loads(out)["checks"] if c["part"] == "source")
    assert code == 1 and source["ok"] is False and "401" in source["message"]


def test_no_secret_in_answer_steps_or_settings(
    capsys: pytest.CaptureFixture[str], config: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace_module, "open_llm", lambda settings: rok_script())
    code, out, err = run(
        capsys, "--config", config, "ask", "Who directed Titanic?", "--source", "secure", "--json"
    )
    assert code == 0, err
    assert SECRET not in out and "steps" in json.loads(out)
    monkeypatch.setenv("KGMW_ENDPOINT_TOKEN", SECRET)
    code, out, _ = run(capsys, "--config", config, "settings", "--json")
    assert code == 0 and SECRET not in out


def test_password_in_url_not_echoed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGMW_RETRIES", "0")
    monkeypatch.setenv("KGMW_ENCODER", "hash")
    url = f"http://alice:{SECRET}@127.0.0.1:{free_port()}/query"
    code, out, err = run(capsys, "neighbors", "<urn:x>", "--endpoint", url, "--timeout", "2")
    assert code == 1 and "127.0.0.1" in err
    assert SECRET not in out + err
    code, out, err = run(capsys, "doctor", "--no-llm", "--endpoint", url, "--json")
    assert SECRET not in out + err

"""``kgmw settings``: each setting's value and where it came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run


def test_settings_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGMW_MAX_HOPS", "3")
    data = json.loads(run(capsys, "settings", "--json")[1])
    assert data["max_hops"] == {"value": 3, "from": "env"}


def test_settings_refuses_an_unknown_method(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "kgmw.toml"
    config.write_text('method = "rokk"\n')
    code, _, err = run(capsys, "--config", str(config), "settings")
    assert code != 0
    assert "unknown method 'rokk'" in err and "did you mean 'rok'?" in err


def test_a_misspelt_variable_is_noted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGMW_METOD", "plan")
    code, out, err = run(capsys, "settings", "--json")
    assert code == 0 and json.loads(out)["method"]["value"] == "rok"
    assert "KGMW_METOD names no setting and is ignored (did you mean KGMW_METHOD?)" in err


def test_variables_the_settings_read_secrets_from_are_not_noted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "kgmw.toml"
    config.write_text(
        'llm_api_key_env = "KGMW_LLM_API_KEY"\nendpoint_password = "env:KGMW_ENDPOINT_PASS"\n'
        'endpoint_token = "env: KGMW_ENDPOINT_TOKN"\n'  # a space after env: reads the same
    )
    monkeypatch.setenv("KGMW_ENDPOINT_TOKN", "t")
    monkeypatch.setenv("KGMW_LLM_API_KEY", "sk-secret")
    monkeypatch.setenv("KGMW_ENDPOINT_PASS", "pw")
    code, _, err = run(capsys, "--config", str(config), "settings")
    assert code == 0
    assert "KGMW_LLM_API_KEY " not in err and "KGMW_ENDPOINT_PASS " not in err
    assert "KGMW_ENDPOINT_TOKN" not in err
    assert "sk-secret" not in err and "LLM_API_KEY_ENV" not in err

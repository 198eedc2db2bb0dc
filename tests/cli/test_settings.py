"""``kgmw settings``: each setting's value and where it came from."""

from __future__ import annotations

import json

import pytest

from tests.cli_helpers import run


def test_settings_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGMW_MAX_HOPS", "3")
    data = json.loads(run(capsys, "settings", "--json")[1])
    assert data["max_hops"] == {"value": 3, "from": "env"}

"""Fixtures shared by the learning tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.testing.graphs import films_path
from tests.cli_helpers import run


@pytest.fixture
def films_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A store folder holding the films graph, loaded by ``kgmw load``."""
    folder = tmp_path / "films"
    assert run(capsys, "load", str(films_path()), "--store", str(folder), "--no-progress")[0] == 0
    return folder

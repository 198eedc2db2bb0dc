"""Which folders `--store` opens: a kgmw store, a plain Oxigraph database, nothing else."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyoxigraph as ox
import pytest

from middleware.errors import BadRequest, NotFound
from middleware.kg.backends.local import LocalStore
from tests.cli_helpers import run
from tests.conftest import FILMS, oxigraph_binary

EX = "http://example.org/film/"


def test_mistyped_store_fails_and_creates_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "x" / "no-such-store"
    code, _, err = run(capsys, "neighbors", "James Cameron", "--store", str(missing))
    assert code == 2 and "no store at" in err and "kgmw load" in err
    assert not missing.exists() and not missing.parent.exists()


def test_empty_folder_is_not_a_store_for_readers(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="holds no store"):
        LocalStore(tmp_path, read_only=True)
    assert list(tmp_path.iterdir()) == []


def test_plain_oxigraph_database_opens_read_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "plain"
    plain = ox.Store(str(folder))
    plain.bulk_load(path=str(FILMS), format=ox.RdfFormat.TURTLE)
    plain.flush()
    del plain
    code, out, _ = run(capsys, "paths", "Titanic", "Avatar", "--store", str(folder))
    assert code == 0 and "1 path(s)" in out
    store = LocalStore(folder, read_only=True)
    assert store.profile.name == "generic" and len(store) > 0
    with pytest.raises(BadRequest, match="plain Oxigraph"):
        LocalStore(folder).load([FILMS])


def test_database_made_by_oxigraph_load_opens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "by-cli"
    subprocess.run(
        [oxigraph_binary(), "load", "--location", str(folder), "--file", str(FILMS)],
        check=True,
        capture_output=True,
    )
    code, out, _ = run(capsys, "neighbors", f"<{EX}Titanic>", "--store", str(folder))
    assert code == 0 and "James Cameron" in out

"""Replacing and deleting a store, and what a new load invalidates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from middleware.kg.backends.local import LocalStore
from middleware.text.linking import EntityLinker
from tests.cli_helpers import run
from tests.conftest import FILMS

TINY = '<urn:x:a> <urn:x:knows> <urn:x:b> .\n<urn:x:a> <http://www.w3.org/2000/01/rdf-schema#label> "Alpha" .\n'
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def _count(capsys: pytest.CaptureFixture[str], folder: str) -> int:
    code, out, err = run(capsys, "query", COUNT, "--store", folder, "--json")
    assert code == 0, err
    return int(json.loads(out)["results"]["bindings"][0]["n"]["value"])


def test_replace_swaps_the_whole_graph(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.nt"
    tiny.write_text(TINY)
    folder = str(tmp_path / "s")
    assert run(capsys, "load", str(FILMS), "--store", folder, "--no-progress")[0] == 0
    reader = LocalStore(folder, read_only=True)  # a service's open handle
    assert len(reader) == 28
    assert EntityLinker(reader).best("Titanic") is not None
    assert run(capsys, "load", str(tiny), "--store", folder, "--no-progress")[0] == 0
    assert _count(capsys, folder) == 30  # a load adds
    code, out, _ = run(capsys, "load", str(tiny), "--store", folder, "--replace", "--no-progress")
    assert code == 0 and "now holds 2 triples" in out
    assert _count(capsys, folder) == 2
    assert len(reader) == 2  # an open reader moves to the new graph at its next query
    linker = EntityLinker(reader)  # and its label index is rebuilt
    assert linker.best("Titanic") is None
    found = linker.best("Alpha")
    assert found is not None and found.iri.value == "urn:x:a"
    reader.close()


def test_replace_may_change_the_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    kb = tmp_path / "kb.txt"
    kb.write_text("Titanic|directed_by|James Cameron\n")
    folder = str(tmp_path / "s")
    assert run(capsys, "load", str(FILMS), "--store", folder, "--no-progress")[0] == 0
    code, _, err = run(capsys, "load", str(kb), "--store", folder, "--profile", "metaqa")
    assert code == 2 and "--replace" in err
    args = ["load", str(kb), "--store", folder, "--profile", "metaqa", "--replace"]
    assert run(capsys, *args, "--no-progress")[0] == 0
    code, out, err = run(capsys, "neighbors", "Titanic", "--store", folder)
    assert code == 0 and "James Cameron" in out and err == ""  # metaqa remembered


def test_a_failed_replace_keeps_the_old_graph(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.nt"
    bad.write_text("<urn:a> <urn:b> .\n")
    folder = str(tmp_path / "s")
    assert run(capsys, "load", str(FILMS), "--store", folder, "--no-progress")[0] == 0
    assert run(capsys, "load", str(bad), "--store", folder, "--replace")[0] == 2
    assert _count(capsys, folder) == 28


def test_a_deleted_store_is_gone_for_good(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "s"
    assert run(capsys, "load", str(FILMS), "--store", str(folder), "--no-progress")[0] == 0
    shutil.rmtree(folder)
    code, _, err = run(capsys, "neighbors", "Titanic", "--store", str(folder))
    assert code == 2 and "no store at" in err and not folder.exists()


@pytest.mark.parametrize("made", ["missing", "malformed"])
def test_a_failed_first_load_leaves_no_store_behind(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, made: str
) -> None:
    """A load into a new folder that fails (a missing file, malformed Turtle) leaves no
    folder, so later commands say there is no store rather than find an empty one."""
    source = tmp_path / "data.ttl"
    if made == "malformed":
        source.write_text('<http://x/a> <http://x/b> "unterminated .\n')
    store = tmp_path / "stores" / "films" / "new"  # its parent folders are new too
    code, _, err = run(capsys, "load", str(source), "--store", str(store), "--no-progress")
    assert code != 0 and str(source.name) in err
    assert not (tmp_path / "stores").exists()
    code, _, err = run(capsys, "neighbors", "Titanic", "--store", str(store))
    assert code != 0 and "no entity" not in err


def test_a_failed_load_into_an_existing_store_keeps_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = tmp_path / "films"
    assert run(capsys, "load", str(FILMS), "--store", str(store), "--no-progress")[0] == 0
    code, _, _ = run(capsys, "load", str(tmp_path / "missing.ttl"), "--store", str(store))
    assert code != 0 and store.exists()
    assert len(LocalStore(store, read_only=True)) > 0


def test_a_failed_first_load_leaves_folders_others_filled_meanwhile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the folders this load made, and only while empty, go: a store another
    command loaded under the same new parent meanwhile stays."""
    from middleware.errors import BadRequest
    from middleware.kg.backends.local import LocalStore as Store

    real_load = Store.load

    def load_beside(self: Store, *args: object, **kwargs: object) -> object:
        monkeypatch.setattr(Store, "load", real_load)
        assert run(capsys, "load", str(FILMS), "--store", str(tmp_path / "kg" / "music"))[0] == 0
        raise BadRequest("the second file is malformed")  # then this load fails

    monkeypatch.setattr(Store, "load", load_beside)
    code, _, _ = run(capsys, "load", str(FILMS), "--store", str(tmp_path / "kg" / "films"))
    assert code != 0
    assert not (tmp_path / "kg" / "films").exists()
    assert _count(capsys, str(tmp_path / "kg" / "music")) == 28


def test_a_store_named_through_a_missing_folder_is_the_store_itself(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``nope/../films`` is ``films``: a load adds to it, never swaps in an empty store."""
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "load", str(FILMS), "--store", "films", "--no-progress")[0] == 0
    more = tmp_path / "more.nt"
    more.write_text("<http://x/a> <http://x/b> <http://x/c> .\n")
    assert run(capsys, "load", str(more), "--store", "nope/../films", "--no-progress")[0] == 0
    assert _count(capsys, "films") == 29
    assert not (tmp_path / "nope").exists()


def test_a_failed_first_load_keeps_the_store_another_command_loaded_meanwhile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from middleware.errors import BadRequest
    from middleware.kg.backends.local import LocalStore as Store

    real_load = Store.load
    store = str(tmp_path / "films")

    def loaded_beside(self: Store, *args: object, **kwargs: object) -> object:
        monkeypatch.setattr(Store, "load", real_load)
        assert run(capsys, "load", str(FILMS), "--store", store, "--no-progress")[0] == 0
        raise BadRequest("the file is malformed")  # then the first command's load fails

    monkeypatch.setattr(Store, "load", loaded_beside)
    assert run(capsys, "load", str(FILMS), "--store", store, "--no-progress")[0] != 0
    assert _count(capsys, store) == 28


def test_a_failed_first_load_into_an_empty_folder_leaves_it_empty(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text('<http://x/a> <http://x/b> "unterminated .\n')
    folder = tmp_path / "empty"
    folder.mkdir()
    assert run(capsys, "load", str(bad), "--store", str(folder), "--no-progress")[0] != 0
    assert folder.is_dir() and list(folder.iterdir()) == []


@pytest.mark.parametrize("named", ["loop", "x/../loop", "dangling"])
def test_a_store_path_through_a_broken_link_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loop").symlink_to("loop")  # a link to itself
    (tmp_path / "dangling").symlink_to("gone")
    code, _, err = run(capsys, "load", str(FILMS), "--store", named, "--no-progress")
    assert code == 2 and "link" in err and "Traceback" not in err
    assert (tmp_path / "loop").is_symlink() and (tmp_path / "dangling").is_symlink()

"""`--source NAME` on the graph commands, and the profile a store remembers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from middleware.cli import main
from tests.cli_helpers import run
from tests.conftest import FILMS

EX = "http://example.org/film/"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("named") / "films"
    assert main(["load", str(FILMS), "--store", str(folder), "--no-progress"]) == 0
    return str(folder)


@pytest.fixture
def config(tmp_path: Path, store: str, oxigraph_server: str) -> str:
    path = tmp_path / "kgmw.toml"
    path.write_text(
        f'[sources.films]\nstore = "{store}"\n\n[sources.remote]\nendpoint = "{oxigraph_server}"\n'
    )
    return str(path)


@pytest.mark.parametrize(
    "args",
    [
        ["neighbors", "Titanic"],
        ["paths", "Titanic", "Avatar"],
        ["link", "Jim Cameron"],
        ["describe", "Titanic"],
        ["query", f"ASK {{ <{EX}Titanic> ?p ?o }}"],
        ["inspect"],
    ],
)
@pytest.mark.parametrize("name", ["films", "remote"])
def test_every_graph_command_takes_a_named_source(
    capsys: pytest.CaptureFixture[str], config: str, args: list[str], name: str
) -> None:
    code, out, err = run(capsys, "--config", config, *args, "--source", name)
    assert code == 0, err
    assert out.strip()


def test_unknown_source_and_both_kinds_are_refused(
    capsys: pytest.CaptureFixture[str], config: str, store: str
) -> None:
    code, _, err = run(capsys, "--config", config, "link", "Titanic", "--source", "nope")
    assert code == 1 and "no source named 'nope'" in err and "films" in err
    code, _, err = run(
        capsys, "--config", config, "link", "Titanic", "--source", "films", "--store", store
    )
    assert code == 2 and "not both" in err


def test_store_remembers_its_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    kb = tmp_path / "kb.txt"
    kb.write_text("Titanic|directed_by|James Cameron\nAvatar|directed_by|James Cameron\n")
    folder = str(tmp_path / "movies")
    assert run(capsys, "load", str(kb), "--store", folder, "--profile", "metaqa")[0] == 0
    code, out, err = run(capsys, "paths", "Titanic", "Avatar", "--store", folder, "--json")
    assert code == 0 and len(json.loads(out)["paths"]) == 1 and err == ""
    # the same profile named again: no warning
    code, _, err = run(capsys, "link", "Titanic", "--store", folder, "--profile", "metaqa")
    assert code == 0 and err == ""
    # a different profile on a read: used as asked, with a warning naming both
    code, _, err = run(capsys, "link", "Titanic", "--store", folder, "--profile", "generic")
    assert "loaded with profile 'metaqa'" in err and "'generic'" in err
    # a different profile on a load: refused, the store unchanged
    more = tmp_path / "more.txt"
    more.write_text("Aliens|directed_by|James Cameron\n")
    code, _, err = run(capsys, "load", str(more), "--store", folder, "--profile", "freebase")
    assert code == 2 and "profile 'metaqa'" in err
    code, out, _ = run(capsys, "query", "SELECT * WHERE { ?s ?p ?o }", "--store", folder, "--json")
    assert len(json.loads(out)["results"]["bindings"]) == 5  # 2 triples, 3 labels


def test_store_remembers_a_profile_file_by_its_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "profiles" / "mine.yaml"
    mine.parent.mkdir()
    text = (Path(__file__).parents[2] / "mappings" / "metaqa.yaml").read_text()
    mine.write_text(text.replace("name: metaqa", "name: mine", 1))
    kb = tmp_path / "kb.txt"
    kb.write_text("Titanic|directed_by|James Cameron\nAvatar|directed_by|James Cameron\n")
    monkeypatch.chdir(tmp_path)
    args = ["load", "kb.txt", "--store", "movies", "--profile", "profiles/mine.yaml"]
    assert run(capsys, *args, "--no-progress")[0] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = run(capsys, "paths", "Titanic", "Avatar", "--store", "../movies")
    assert code == 0 and "James Cameron" in out and err == ""
    code, _, err = run(capsys, "link", "Titanic", "--store", "../movies", "--profile", "metaqa")
    assert "loaded with profile 'mine'" in err

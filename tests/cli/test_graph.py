"""The graph commands (load, query, neighbors, paths, link, describe), in process and as
a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from middleware.cli import main
from tests.cli_helpers import run
from tests.conftest import FILMS

EX = "http://example.org/film/"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("cli") / "store"
    assert main(["load", str(FILMS), "--store", str(folder), "--no-progress"]) == 0
    return str(folder)


def test_load_reports_rate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "load", str(FILMS), "--store", str(tmp_path / "s"), "--no-progress")
    assert code == 0 and "triples/s" in out and "now holds" in out


def test_load_error_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.nt"
    bad.write_text("<http://a> <http://b> .\n")
    code, _, err = run(capsys, "load", str(bad), "--store", str(tmp_path / "s"), "--no-progress")
    assert code == 2
    assert err.startswith(f"kgmw: error: {bad}:1: ") and err.count("\n") == 1


def test_neighbors_by_label_and_json(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, "neighbors", "Titanic", "--store", store)
    assert code == 0 and "directed by" in out and "James Cameron" in out
    code, out, _ = run(
        capsys, "neighbors", f"<{EX}Titanic>", "--store", store, "--json", "--direction", "out"
    )
    data = json.loads(out)
    assert data["entity"] == EX + "Titanic" and len(data["triples"]) == 4
    assert {"subject", "predicate", "object", "source", "text"} <= set(data["triples"][0])


def test_paths_table_and_json(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, "paths", "Titanic", "Avatar", "--store", store)
    assert (
        code == 0
        and "Titanic —directed by→ James Cameron; Avatar —directed by→ James Cameron" in out
    )
    code, out, _ = run(
        capsys,
        "paths",
        "Avatar",
        "Leonardo DiCaprio",
        "--max-hops",
        "3",
        "--store",
        store,
        "--json",
    )
    assert [len(p["hops"]) for p in json.loads(out)["paths"]] == [3]


def test_link_and_describe(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, "link", "Jim Cameron", "--store", store, "--json")
    assert json.loads(out)[0]["iri"] == EX + "Cameron"
    code, out, _ = run(capsys, "describe", "Titanic", "--store", store)
    assert code == 0 and "1997 film by James Cameron" in out


def test_query_and_refused_update(
    capsys: pytest.CaptureFixture[str], store: str, tmp_path: Path
) -> None:
    code, out, _ = run(
        capsys,
        "query",
        f"SELECT ?f WHERE {{ ?f <{EX}directedBy> <{EX}Cameron> }}",
        "--store",
        store,
    )
    assert code == 0 and "(2 rows)" in out
    query_file = tmp_path / "q.rq"
    query_file.write_text(f"ASK {{ <{EX}Titanic> ?p ?o }}")
    assert run(capsys, "query", f"@{query_file}", "--store", store)[1].strip() == "yes"
    code, _, err = run(capsys, "query", "DROP ALL", "--store", store)
    assert code == 2 and "updates are not allowed" in err


def test_errors_exit_non_zero(capsys: pytest.CaptureFixture[str], store: str) -> None:
    assert run(capsys, "neighbors", "No Such Thing Anywhere", "--store", store)[0] == 2
    assert run(capsys, "paths", "Titanic", "Avatar", "--max-hops", "9", "--store", store)[0] == 2
    code, _, err = run(capsys, "neighbors", "x", "--endpoint", "ftp://nowhere")
    assert code == 2 and "http://" in err


def test_endpoint_source(capsys: pytest.CaptureFixture[str], oxigraph_server: str) -> None:
    code, out, _ = run(capsys, "paths", "Titanic", "Avatar", "--endpoint", oxigraph_server)
    assert code == 0 and "1 path(s)" in out


def test_sample_graph_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "paths", "James Cameron", "Kate Winslet", "--max-hops", "2")
    assert code == 0 and "James Cameron —directed→ Titanic —starring→ Kate Winslet" in out


def test_console_script_runs(store: str) -> None:
    kgmw = Path(sys.executable).parent / "kgmw"
    done = subprocess.run(
        [str(kgmw), "link", "Kate Winslet", "--store", store], capture_output=True, text=True
    )
    assert done.returncode == 0 and "Kate Winslet" in done.stdout
    done = subprocess.run(
        [str(kgmw), "neighbors", "<bad iri>", "--store", store], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stderr.startswith("kgmw: error: not a valid IRI")

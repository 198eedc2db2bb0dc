"""`kgmw export`: a store written back out as RDF, to a file or stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from middleware.cli import main
from tests.cli_helpers import run
from tests.conftest import FILMS


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("export") / "films"
    assert main(["load", str(FILMS), "--store", str(folder), "--no-progress"]) == 0
    return str(folder)


def _triples(data: bytes, fmt: ox.RdfFormat) -> set[str]:
    return {str(q.triple) for q in ox.parse(data, fmt)}


def test_nq_to_stdout_holds_every_triple(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, err = run(capsys, "export", "--store", store, "--format", "nq")
    assert code == 0, err
    expected = _triples(FILMS.read_bytes(), ox.RdfFormat.TURTLE)
    assert _triples(out.encode(), ox.RdfFormat.N_QUADS) == expected


@pytest.mark.parametrize(
    ("fmt", "suffix", "rdf"),
    [
        ("nt", "nt", ox.RdfFormat.N_TRIPLES),
        ("nq", "nq", ox.RdfFormat.N_QUADS),
        ("ttl", "ttl", ox.RdfFormat.TURTLE),
        ("trig", "trig", ox.RdfFormat.TRIG),
        ("rdfxml", "rdf", ox.RdfFormat.RDF_XML),
    ],
)
def test_every_format_to_a_file_loads_back(
    capsys: pytest.CaptureFixture[str],
    store: str,
    tmp_path: Path,
    fmt: str,
    suffix: str,
    rdf: ox.RdfFormat,
) -> None:
    target = tmp_path / f"films.{suffix}"
    code, out, _ = run(capsys, "export", "--store", store, "--format", fmt, "--out", str(target))
    assert code == 0 and "28 triples" in out
    assert _triples(target.read_bytes(), rdf) == _triples(FILMS.read_bytes(), ox.RdfFormat.TURTLE)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no temporary file left
    # the format follows from the file name when --format is left out
    again = tmp_path / f"again.{suffix}"
    assert run(capsys, "export", "--store", store, "--out", str(again))[0] == 0
    assert again.read_bytes() == target.read_bytes()


def test_named_graphs_need_a_quad_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    quads = tmp_path / "g.nq"
    quads.write_text("<urn:a> <urn:p> <urn:b> <urn:g> .\n<urn:a> <urn:p> <urn:c> .\n")
    folder = str(tmp_path / "s")
    assert run(capsys, "load", str(quads), "--store", folder, "--no-progress")[0] == 0
    target = tmp_path / "out.nt"
    code, _, err = run(capsys, "export", "--store", folder, "--format", "nt", "--out", str(target))
    assert code == 2 and "named graph" in err and "--format nq" in err
    assert not target.exists()
    code, out, _ = run(capsys, "export", "--store", folder, "--format", "trig")
    assert code == 0 and "<urn:g>" in out


def test_export_needs_a_store(
    capsys: pytest.CaptureFixture[str], oxigraph_server: str, tmp_path: Path
) -> None:
    config = tmp_path / "kgmw.toml"
    config.write_text(f'[sources.remote]\nendpoint = "{oxigraph_server}"\n')
    code, _, err = run(
        capsys, "--config", str(config), "export", "--source", "remote", "--format", "nt"
    )
    assert code == 2 and "--store" in err
    missing = tmp_path / "nope"
    code, _, err = run(capsys, "export", "--store", str(missing), "--format", "nt")
    assert code == 2 and "no store at" in err and not missing.exists()
    code, _, err = run(
        capsys, "export", "--store", str(tmp_path), "--out", str(tmp_path / "x.json")
    )
    assert code == 2 and "--format" in err


def test_export_a_plain_oxigraph_database(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "plain"
    plain = ox.Store(str(folder))
    plain.bulk_load(path=str(FILMS), format=ox.RdfFormat.TURTLE)
    plain.flush()
    del plain
    code, out, _ = run(capsys, "export", "--store", str(folder), "--format", "nt")
    assert code == 0 and len(out.splitlines()) == 28
    code, out, _ = run(
        capsys,
        "query",
        "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
        "--store",
        str(folder),
        "--json",
    )
    assert json.loads(out)["results"]["bindings"][0]["n"]["value"] == "28"

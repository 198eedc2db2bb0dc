"""`kgmw inspect`: a store or an endpoint, as a table or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run

TINY = (
    '<urn:x:a> <http://www.w3.org/2000/01/rdf-schema#label> "Alpha" .\n'
    "<urn:x:a> <urn:x:knows> <urn:x:b> .\n"
    '<urn:x:b> <http://www.w3.org/2000/01/rdf-schema#label> "Beta" .\n'
)


def loaded(capsys: pytest.CaptureFixture[str], folder: Path, name: str, triples: str) -> str:
    """A store at ``folder/name`` loaded from N-Triples ``triples`` with ``kgmw load``."""
    data = folder / f"{name}.nt"
    data.write_text(triples)
    store = str(folder / name)
    assert run(capsys, "load", str(data), "--store", store, "--no-progress")[0] == 0
    return store


def test_inspect_a_store_loaded_without_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = loaded(capsys, tmp_path, "tiny", TINY)
    code, out, _ = run(capsys, "inspect", "--store", store, "--json")
    report = json.loads(out)
    assert code == 0
    assert report["suggested_profile"]["label_predicates"] == [
        "http://www.w3.org/2000/01/rdf-schema#label"
    ]
    assert report["sizes"]["triples"] == 3
    code, out, _ = run(capsys, "inspect", "--store", store)
    assert code == 0 and "label_predicates:" in out and "rdf-schema#label" in out


def test_inspect_an_endpoint(capsys: pytest.CaptureFixture[str], oxigraph_server: str) -> None:
    code, out, _ = run(capsys, "inspect", "--endpoint", oxigraph_server, "--sample", "1000")
    assert code == 0 and "rdf-schema#label" in out and "starring" in out


FILMS = "".join(
    f"<{iri}> <http://rdf.freebase.com/ns/film.film.directed_by> "
    "<http://rdf.freebase.com/ns/m.0a_long_director_identifier_that_goes_on_and_on_and_on> .\n"
    f'<{iri}> <http://www.w3.org/2000/01/rdf-schema#label> "Film {n}" .\n'
    for n, iri in enumerate(f"http://rdf.freebase.com/ns/m.film{n}" for n in range(3))
)


def test_inspect_tables_name_relations_and_keep_iris_whole(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = loaded(capsys, tmp_path, "films", FILMS)
    code, out, _ = run(capsys, "inspect", "--store", store)
    assert code == 0
    relations = out.split("Relations (IRI-valued predicates")[1].split("Hubs")[0]
    assert "directed by" in relations  # film.film.directed_by, humanized
    assert "fb:film.film.directed_by" in relations  # a prefixed form, not a cut IRI
    hubs = out.split("Hubs (most pointed-at objects)")[1]
    assert "fb:m.0a_long_director_identifier_that_goes_on_and_on_and_on" in hubs
    assert "…" not in relations + hubs
    code, out, _ = run(capsys, "inspect", "--store", store, "--json")
    report = json.loads(out)
    assert report["relations"][0]["label"] == "directed by"
    assert report["relations"][0]["predicate"] == "http://rdf.freebase.com/ns/film.film.directed_by"


def test_neighbors_and_query_tables_keep_iris_whole(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = loaded(capsys, tmp_path, "films", FILMS)
    long_iri = "http://rdf.freebase.com/ns/m.0a_long_director_identifier_that_goes_on_and_on_and_on"
    code, out, _ = run(capsys, "neighbors", "http://rdf.freebase.com/ns/m.film0", "--store", store)
    assert code == 0 and long_iri in out and "directed by" in out
    query = f"SELECT ?o WHERE {{ ?s ?p <{long_iri}> . BIND(?s AS ?o) }}"
    code, out, _ = run(capsys, "query", query, "--store", store)
    assert code == 0 and "http://rdf.freebase.com/ns/m.film0" in out
    code, out, _ = run(
        capsys, "query", f"SELECT ?x WHERE {{ BIND(<{long_iri}> AS ?x) }}", "--store", store
    )
    assert code == 0 and long_iri in out

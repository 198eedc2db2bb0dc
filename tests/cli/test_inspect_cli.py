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


def test_inspect_a_store_loaded_without_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "tiny.nt"
    data.write_text(TINY)
    store = str(tmp_path / "tiny")
    assert run(capsys, "load", str(data), "--store", store, "--no-progress")[0] == 0
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

"""Crafted input files are refused with a clear error, after a bounded read, and the
store is left as it was."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from middleware.errors import LoadError
from middleware.kg import load_guard
from middleware.kg.backends.local import LocalStore

GOOD = "<http://e/a> <http://e/p> <http://e/b> .\n"
LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [
 <!ENTITY a "haha">
 <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
 <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
 <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
 <!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">
 <!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">
 <!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">
 <!ENTITY i "&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;">
]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://e/">
  <rdf:Description rdf:about="http://e/x"><e:p>&i;</e:p></rdf:Description>
</rdf:RDF>
"""


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    graph = LocalStore(tmp_path / "store")
    good = tmp_path / "good.nt"
    good.write_text(GOOD, encoding="utf-8")
    graph.load([good])
    return graph


def refused(store: LocalStore, path: Path, words: str) -> LoadError:
    with pytest.raises(LoadError) as caught:
        store.load([path])
    assert words in caught.value.message, caught.value.message
    assert len(store) == 1  # unchanged
    return caught.value


@pytest.mark.parametrize("suffix", [".rdf", ".trix"])
def test_xml_entity_expansion_is_refused(store: LocalStore, tmp_path: Path, suffix: str) -> None:
    bomb = tmp_path / f"laughs{suffix}"
    bomb.write_text(LAUGHS.replace("rdf:RDF", "TriX") if suffix == ".trix" else LAUGHS)
    error = refused(store, bomb, "DOCTYPE")
    assert error.line == 2
    assert error.hint and "expand the entities first" in error.hint


def test_a_gzip_bomb_is_refused_after_a_bounded_read(
    store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(load_guard, "RATIO_FLOOR", 1 << 20)
    bomb = tmp_path / "bomb.nt.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as out:
        out.write(GOOD.encode())
        for _ in range(64):
            out.write(b"#" + b" " * (1 << 20) + b"\n")  # 64 MiB of comment lines
    reads: list[int] = []
    original = load_guard.GuardedInput._check

    def spy(self: load_guard.GuardedInput, chunk: bytes) -> None:
        reads.append(self.total + len(chunk))
        original(self, chunk)

    monkeypatch.setattr(load_guard.GuardedInput, "_check", spy)
    refused(store, bomb, f"more than {store.caps.max_ratio}×")
    assert max(reads) < 4 << 20  # stopped soon after the floor, not at 64 MiB


def test_a_single_line_bomb_is_refused(
    store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.caps = load_guard.LoadCaps(max_line=1 << 20)
    line = tmp_path / "line.nt"
    line.write_text(GOOD + '<http://e/a> <http://e/p> "' + "x" * (2 << 20) + '" .\n')
    refused(store, line, "line longer than 1 MiB")


def test_a_whole_file_format_is_capped(
    store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.caps = load_guard.LoadCaps(max_whole=1 << 20)
    trix = tmp_path / "big.trix"
    trix.write_text("<TriX>" + " " * (2 << 20) + "</TriX>")
    refused(store, trix, "read whole")


def test_a_genuine_gzip_file_still_loads(store: LocalStore, tmp_path: Path) -> None:
    data = tmp_path / "more.nt.gz"
    with gzip.open(data, "wt") as out:
        for n in range(2000):
            out.write(f"<http://e/n{n}> <http://e/p> <http://e/m{n}> .\n")
    store.load([data])
    assert len(store) == 2001


def test_kgmw_load_takes_its_caps_from_the_settings(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from middleware.cli import cli

    line = tmp_path / "line.nt"
    line.write_text(GOOD + '<http://e/a> <http://e/p> "' + "x" * (2 << 20) + '" .\n')
    result = CliRunner().invoke(
        cli,
        ["load", str(line), "--store", str(tmp_path / "st")],
        env={"KGMW_LOAD_MAX_LINE_MIB": "1", "KGMW_PROGRESS": "false"},
    )
    error = result.exception
    assert isinstance(error, LoadError) and "line longer than 1 MiB" in str(error)
    assert "load_max_line_mib" in (error.hint or "")

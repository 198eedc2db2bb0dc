"""`kgmw datasets`: the list as a table and as JSON; `kgmw datasets fetch` from a local
mirror, with the checksum table overridden, and its errors as one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from middleware.eval.catalogue import CATALOGUE
from middleware.eval.datasets import load_dataset
from tests.cli_helpers import run
from tests.dataset_mirror import build_mirror, serve_folder


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    folder = tmp_path / "mirror"
    folder.mkdir()
    with serve_folder(folder) as url:
        yield folder, url


def test_the_list_names_each_file_its_checksum_and_url(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "datasets")
    assert code == 0
    for source in CATALOGUE.values():
        assert f"\n{source.name}: {source.title}" in out
        for item in source.downloads:
            assert ", ".join(item.targets) in out
            assert (item.sha256 or "none known") in out and (item.url or "by hand") in out
    assert "sha256 none published" in out  # FB15k-237's official archive


def test_the_list_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "datasets", "--json")
    listed = {entry["name"]: entry for entry in json.loads(out)}
    assert code == 0 and list(listed) == list(CATALOGUE)
    assert listed["fb15k-237"]["official"]["sha256"] is None
    assert listed["openbookqa"]["downloads"][0]["members"] == {
        f"OpenBookQA-V1-Sep2018/Data/Main/{name}": f"openbookqa/{name}"
        for name in ("dev.jsonl", "test.jsonl", "openbook.txt")
    }
    assert "kgmw load --recipe metaqa" in listed["metaqa"]["used_by"]


def test_fetch_from_the_mirror_setting_with_a_progress_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    mirror: tuple[Path, str],
    tmp_path: Path,
) -> None:
    folder, url = mirror
    monkeypatch.setitem(CATALOGUE, "openbookqa", build_mirror(CATALOGUE["openbookqa"], folder))
    monkeypatch.setenv("KGMW_DATASETS_BASE_URL", url)
    data = tmp_path / "data"
    code, out, err = run(capsys, "datasets", "fetch", "openbookqa", "--data-dir", str(data))
    assert code == 0, err
    assert out.splitlines() == [
        f"openbookqa: wrote openbookqa/dev.jsonl, openbookqa/test.jsonl, openbookqa/openbook.txt "
        f"under {data}, SHA-256 checked",
        "openbookqa: read by kgmw eval --dataset openbookqa",
    ]
    assert err.count("\n") == 1 and "openbookqa/OpenBookQA-V1-Sep2018.zip: 100%" in err
    assert load_dataset("openbookqa", split="dev", data_dir=data).items


def test_fetch_errors_are_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    mirror: tuple[Path, str],
    tmp_path: Path,
) -> None:
    folder, url = mirror
    build_mirror(CATALOGUE["qald-10"], folder)  # the real checksum: this fake is not the file
    data = tmp_path / "data"
    args = ("datasets", "fetch", "qald-10", "--data-dir", str(data), "--no-progress")
    code, _, err = run(capsys, *args, "--base-url", url)
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("kgmw: error: checksum mismatch for qald-10/qald_10.json from ")
    assert not data.exists()
    code, _, err = run(capsys, "datasets", "fetch", "qald-10", "--no-progress")
    assert code == 2 and err == "kgmw: error: fetching qald-10 needs --data-dir\n"

"""Fetching a dataset from a local mirror: the layout the loaders and recipes read,
checksums checked, nothing left behind by a failure, errors that say what to do."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from middleware.errors import BadRequest, DownloadError
from middleware.eval.catalogue import CATALOGUE, DatasetSource, used_by
from middleware.eval.datasets import DATASETS, load_dataset
from middleware.eval.fetch import fetch, sha256_of
from middleware.kg.recipes import RECIPES
from tests.conftest import free_port
from tests.dataset_mirror import build_mirror, fixture_bytes, serve_folder


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """An empty folder served over HTTP, and its URL."""
    folder = tmp_path / "mirror"
    folder.mkdir()
    with serve_folder(folder) as url:
        yield folder, url


def _left(data: Path) -> list[str]:
    return sorted(str(p.relative_to(data)) for p in data.rglob("*")) if data.exists() else []


@pytest.mark.parametrize("name", [n for n in CATALOGUE if n != "metaqa"])
def test_fetch_lays_out_what_eval_and_load_read(
    name: str, mirror: tuple[Path, str], tmp_path: Path
) -> None:
    folder, url = mirror
    source = build_mirror(CATALOGUE[name], folder)
    data = tmp_path / "data"
    report = fetch(source, data, base_url=url, progress=False)
    assert report.written == list(source.targets) and not report.unverified
    assert _left(data) == sorted({*source.targets, *(str(Path(t).parent) for t in source.targets)})
    for target in source.targets:
        assert (data / target).read_bytes() == fixture_bytes(target)
    for reader in used_by(source):
        kind, _, chosen = reader.rpartition(" ")
        if kind.endswith("--recipe"):
            assert RECIPES[chosen].paths(data)
        else:
            split = next(iter(DATASETS[chosen].files))
            assert load_dataset(chosen, split=split, data_dir=data).items


def test_metaqa_from_a_mirror_of_its_folder_is_fetched_only_when_asked_unverified(
    mirror: tuple[Path, str], tmp_path: Path
) -> None:
    folder, url = mirror
    source = build_mirror(CATALOGUE["metaqa"], folder, checksums=False)
    data = tmp_path / "data"
    with pytest.raises(BadRequest, match=r"metaqa/kb\.txt has no recorded checksum.*--unverified"):
        fetch(source, data, base_url=url, progress=False)
    assert not data.exists()
    report = fetch(source, data, base_url=url, unverified=True, progress=False)
    assert report.unverified["metaqa/1-hop/vanilla/qa_dev.txt"] == sha256_of(
        folder / "metaqa/1-hop/vanilla/qa_dev.txt"
    )
    assert len(report.unverified) == len(source.downloads)
    assert load_dataset("metaqa-1hop", split="dev", data_dir=data).items
    assert RECIPES["metaqa"].paths(data)


def test_metaqa_without_a_mirror_says_where_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(BadRequest) as caught:
        fetch(CATALOGUE["metaqa"], tmp_path / "data", progress=False)
    text = str(caught.value)
    assert "metaqa has no direct download" in text
    assert "drive.google.com" in text and f"put kb.txt at {tmp_path}/data/metaqa/kb.txt" in text
    assert not (tmp_path / "data").exists()


def test_a_checksum_mismatch_names_the_file_and_leaves_nothing(
    mirror: tuple[Path, str], tmp_path: Path
) -> None:
    folder, url = mirror
    source = build_mirror(CATALOGUE["fb15k-237"], folder)
    last = source.downloads[-1]
    wrong = dataclasses.replace(last, sha256="0" * 64)
    source = dataclasses.replace(source, downloads=(*source.downloads[:-1], wrong))
    data = tmp_path / "data"
    data.mkdir()
    (data / "keep.txt").write_text("mine")
    with pytest.raises(DownloadError) as caught:
        fetch(source, data, base_url=url, progress=False)
    got = sha256_of(folder / last.mirror_path)
    assert caught.value.message == (
        f"checksum mismatch for fb15k-237/relation2text.txt from "
        f"{url}/fb15k-237/relation2text.txt: expected sha256 {'0' * 64}, got {got}"
    )
    assert _left(data) == ["keep.txt"]  # the four good files were not moved in either


def test_a_bad_file_after_good_ones_leaves_a_new_folder_out(
    mirror: tuple[Path, str], tmp_path: Path
) -> None:
    folder, url = mirror
    source = build_mirror(CATALOGUE["openbookqa"], folder)
    (folder / source.downloads[0].mirror_path).write_bytes(b"not the archive")
    with pytest.raises(DownloadError, match="checksum mismatch"):
        fetch(source, tmp_path / "new" / "data", base_url=url, progress=False)
    assert not (tmp_path / "new").exists()


def test_an_unreachable_mirror_says_so_and_how_to_do_it_by_hand(tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    data = tmp_path / "data"
    with pytest.raises(DownloadError) as caught:
        fetch(CATALOGUE["webquestions"], data, base_url=base, progress=False)
    assert caught.value.message.startswith(
        f"webquestions: cannot reach 127.0.0.1:{base.rsplit(':', 1)[1]}: connection refused"
    )
    assert caught.value.hint == (
        f"without network, download {base}/webquestions/WebQuestions.json yourself and put it "
        f"at {data}/webquestions/WebQuestions.json; or fetch from a mirror with --base-url. "
        "Nothing was written"
    )
    assert not data.exists()
    with pytest.raises(DownloadError) as caught:
        fetch(CATALOGUE["fb15k-237"], data, base_url=base, progress=False)
    assert "(`kgmw datasets` lists the other 4 and where they go)" in str(caught.value.hint)


def test_no_network_names_the_official_url_and_the_archive_members(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_dns(*args: object, **kwargs: object) -> None:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    with pytest.raises(DownloadError) as caught:
        fetch(CATALOGUE["openbookqa"], tmp_path, progress=False)
    assert caught.value.message == (
        "openbookqa: cannot reach s3-us-west-2.amazonaws.com: unknown host (no network, or a "
        "wrong URL)"
    )
    hint = caught.value.hint or ""
    assert hint.startswith(
        "without network, download "
        "https://s3-us-west-2.amazonaws.com/ai2-website/data/OpenBookQA-V1-Sep2018.zip yourself"
    )
    assert f"OpenBookQA-V1-Sep2018/Data/Main/dev.jsonl at {tmp_path}/openbookqa/dev.jsonl" in hint
    assert _left(tmp_path) == []


def test_a_missing_file_on_the_mirror_is_its_http_status(
    mirror: tuple[Path, str], tmp_path: Path
) -> None:
    _, url = mirror
    with pytest.raises(DownloadError, match=r"qald-10: .*/qald-10/qald_10\.json answered 404"):
        fetch(CATALOGUE["qald-10"], tmp_path / "data", base_url=url, progress=False)
    assert not (tmp_path / "data").exists()


def test_files_already_there_are_kept_and_other_content_is_refused(
    mirror: tuple[Path, str], tmp_path: Path
) -> None:
    folder, url = mirror
    source: DatasetSource = build_mirror(CATALOGUE["commonsenseqa"], folder)
    data = tmp_path / "data"
    fetch(source, data, base_url=url, progress=False)
    again = fetch(source, data, base_url=url, progress=False)
    assert again.present == list(source.targets) and again.written == []
    target = data / source.targets[0]
    target.write_text("edited\n")
    with pytest.raises(BadRequest, match="is there with other content"):
        fetch(source, data, base_url=url, progress=False)
    assert target.read_text() == "edited\n"

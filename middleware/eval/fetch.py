"""A dataset's downloads laid out under the data folder, all or nothing.

Each file is downloaded into a temporary folder inside the data folder, checked against
its recorded SHA-256 and unpacked there; only when every one passed are the files moved
into place. A failure removes the temporary folder, the files already moved and the
folders made for them: a failed fetch leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from middleware.errors import BadRequest, DownloadError
from middleware.eval.catalogue import DatasetSource, Download
from middleware.eval.download import download


@dataclass
class FetchReport:
    """What a fetch laid out (paths relative to the data folder)."""

    name: str
    data_dir: Path
    written: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)  # there already, not downloaded again
    unverified: dict[str, str] = field(default_factory=dict)  # file: SHA-256 it arrived with


def fetch(
    source: DatasetSource,
    data_dir: Path,
    *,
    base_url: str | None = None,
    unverified: bool = False,
    progress: bool = True,
) -> FetchReport:
    """Download ``source``'s files (from ``base_url``, a mirror, when given), check them
    and lay them out under ``data_dir``; files already there are kept."""
    report = FetchReport(source.name, data_dir)
    todo = [d for d in source.downloads if not _present(d, data_dir, report)]
    for item in todo:
        _check_fetchable(source, item, data_dir, base_url, unverified)
    if not todo:
        return report
    created: list[Path] = []
    moved: list[Path] = []
    _make_dirs(data_dir, created)
    try:
        staging = Path(tempfile.mkdtemp(prefix=".kgmw-fetch-", dir=data_dir))
        try:
            for number, item in enumerate(todo):
                url = _url(item, base_url)
                file = staging / f"download-{number}"
                got = _download(source, item, url, file, data_dir, progress)
                _verify(item, url, got, data_dir, report)
                _unpack(item, file, staging / "files")
            for item in todo:
                for target in item.targets:
                    _make_dirs((data_dir / target).parent, created)
                    os.replace(staging / "files" / target, data_dir / target)
                    moved.append(data_dir / target)
                    report.written.append(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:  # cleanup only: nothing of a failed fetch stays
        for path in moved:
            path.unlink(missing_ok=True)
        for folder in reversed(created):
            with contextlib.suppress(OSError):  # not empty: something else lives there
                folder.rmdir()
        raise
    return report


def _present(item: Download, data_dir: Path, report: FetchReport) -> bool:
    """Whether ``item``'s files are all there already (and, where its checksum is the
    file's own, hold those bytes); a partial or different copy is an error."""
    there = [t for t in item.targets if (data_dir / t).exists()]
    if not there:
        return False
    if len(there) < len(item.targets):
        missing = next(t for t in item.targets if t not in there)
        raise BadRequest(
            f"{data_dir / there[0]} is there but {data_dir / missing} is not",
            hint=f"remove {data_dir / there[0]} to fetch it again",
        )
    if item.put_at and item.sha256:
        got = sha256_of(data_dir / item.put_at)
        if got != item.sha256:
            raise BadRequest(
                f"{data_dir / item.put_at} is there with other content: "
                f"sha256 {got}, expected {item.sha256}",
                hint="remove it to fetch it again",
            )
    report.present.extend(there)
    return True


def _check_fetchable(
    source: DatasetSource,
    item: Download,
    data_dir: Path,
    base_url: str | None,
    unverified: bool,
) -> None:
    if item.url is None and base_url is None:
        raise BadRequest(
            f"{source.name} has no direct download ({item.origin})",
            hint=source.note.replace("DIR/", f"{data_dir}/"),
        )
    if item.sha256 is None and not unverified:
        raise BadRequest(
            f"{item.mirror_path} has no recorded checksum ({item.origin})",
            hint="add --unverified to fetch it all the same; the checksum it arrives with "
            "is printed",
        )


def _url(item: Download, base_url: str | None) -> str:
    if base_url is not None:
        return f"{base_url.rstrip('/')}/{item.mirror_path}"
    assert item.url is not None  # _check_fetchable refused it otherwise
    return item.url


def _download(
    source: DatasetSource, item: Download, url: str, file: Path, data_dir: Path, progress: bool
) -> str:
    try:
        return download(url, file, label=item.mirror_path, progress=progress)
    except DownloadError as err:
        raise DownloadError(
            f"{source.name}: {err.message}",
            hint=by_hand(item, url, data_dir, others=len(source.downloads) - 1),
        ) from err


def by_hand(item: Download, url: str, data_dir: Path, *, others: int = 0) -> str:
    """How to do by hand what fetching ``item`` (and ``others`` more files) would do."""
    if item.put_at:
        steps = f"and put it at {data_dir / item.put_at}"
    else:
        steps = ", unpack it and put " + ", ".join(
            f"{member} at {data_dir / target}" for member, target in item.members
        )
    rest = f" (`kgmw datasets` lists the other {others} and where they go)" if others else ""
    return (
        f"without network, download {url} yourself {steps}{rest}; or fetch from a mirror "
        "with --base-url. Nothing was written"
    )


def _verify(item: Download, url: str, got: str, data_dir: Path, report: FetchReport) -> None:
    if item.sha256 is None:
        report.unverified[item.mirror_path] = got
    elif got != item.sha256:
        raise DownloadError(
            f"checksum mismatch for {item.mirror_path} from {url}: "
            f"expected sha256 {item.sha256}, got {got}",
            hint=f"the file is not the recorded one (changed at its source or damaged on "
            f"the way); nothing was written to {data_dir}",
        )


def _unpack(item: Download, file: Path, into: Path) -> None:
    """Lay ``file`` (a downloaded ``item``) out under ``into`` as the targets say."""
    if item.put_at:
        (into / item.put_at).parent.mkdir(parents=True, exist_ok=True)
        os.replace(file, into / item.put_at)
        return
    try:
        with zipfile.ZipFile(file) as archive:
            for member, target in item.members:
                (into / target).parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, (into / target).open("wb") as out:
                    shutil.copyfileobj(src, out)
    except (zipfile.BadZipFile, KeyError) as err:
        raise DownloadError(f"{item.mirror_path} is not the archive expected: {err}") from err


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _make_dirs(folder: Path, created: list[Path]) -> None:
    """``folder`` and its missing parents, each one made recorded in ``created``."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    for path in reversed(missing):
        path.mkdir()
        created.append(path)

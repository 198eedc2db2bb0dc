"""A mirror for `kgmw datasets fetch` tests: a folder served over HTTP on a free loopback
port, in a thread, and fake copies of a dataset's downloads made from the small files
in tests/data/eval (or a placeholder line where there is none)."""

from __future__ import annotations

import dataclasses
import functools
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from middleware.eval.catalogue import DatasetSource
from middleware.eval.fetch import sha256_of
from tests.conftest import DATA

EVAL = DATA / "eval"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log on the test's output."""


@contextmanager
def serve_folder(folder: Path) -> Iterator[str]:
    """``folder`` over HTTP; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def fixture_bytes(target: str) -> bytes:
    """What a laid-out file holds in the fake: the fixture at ``target``, else one line."""
    fixture = EVAL / target
    return fixture.read_bytes() if fixture.is_file() else f"placeholder for {target}\n".encode()


def build_mirror(source: DatasetSource, mirror: Path, *, checksums: bool = True) -> DatasetSource:
    """Fake copies of ``source``'s downloads at their mirror paths under ``mirror`` (a
    zip holds its members); ``source`` with the fakes' checksums (or as it was)."""
    downloads = []
    for item in source.downloads:
        file = mirror / item.mirror_path
        file.parent.mkdir(parents=True, exist_ok=True)
        if item.put_at:
            file.write_bytes(fixture_bytes(item.put_at))
        else:
            with zipfile.ZipFile(file, "w") as archive:
                for member, target in item.members:
                    archive.writestr(member, fixture_bytes(target))
        if checksums:
            item = dataclasses.replace(item, sha256=sha256_of(file))
        downloads.append(item)
    return dataclasses.replace(source, downloads=tuple(downloads))

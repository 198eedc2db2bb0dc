"""One URL streamed into a file, with a progress bar, hashed as it arrives.

>>> import pathlib, tempfile
>>> source = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
>>> _ = source.write_bytes(b"abc")
>>> download(source.as_uri(), source.with_name("b.txt"), label="a.txt", progress=False)[:16]
'ba7816bf8f01cfea'
"""

from __future__ import annotations

import hashlib
import socket
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from middleware.errors import DownloadError
from middleware.support.progress_bar import progress_bar
from middleware.support.version import default_user_agent

TIMEOUT = 60.0  # seconds one read may wait; a whole download may take longer
_CHUNK = 1 << 16


def download(url: str, dest: Path, *, label: str, progress: bool) -> str:
    """Write what ``url`` serves to ``dest``; the SHA-256 (hex) of those bytes.

    Raises ``DownloadError`` naming the host when it cannot be reached and the status
    when it answers with an error.
    """
    request = urllib.request.Request(url, headers={"User-Agent": default_user_agent()})
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response, dest.open("wb") as out:
            size = int(response.headers.get("Content-Length") or 0) or None
            options = {"unit": "B", "unit_scale": True, "unit_divisor": 1024}
            with progress_bar(total=size, desc=label, disable=not progress, **options) as bar:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
    except urllib.error.HTTPError as err:
        raise DownloadError(f"{url} answered {err.code} {err.reason}") from err
    except urllib.error.URLError as err:
        raise DownloadError(f"cannot reach {_host(url)}: {_reason(err.reason)}") from err
    except TimeoutError as err:
        raise DownloadError(f"{_host(url)} sent nothing for {TIMEOUT:.0f} s") from err
    except ConnectionError as err:
        raise DownloadError(f"{_host(url)} dropped the connection: {err}") from err
    return digest.hexdigest()


def _host(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc or url


def _reason(reason: object) -> str:
    if isinstance(reason, socket.gaierror):
        return "unknown host (no network, or a wrong URL)"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (nothing listens there)"
    return str(reason)

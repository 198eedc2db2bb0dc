"""Temporary files beside a target, renamed into place when complete, with the
permissions any new file of this process gets.

``tempfile.mkstemp`` creates its file readable by its owner alone (0600). Renamed into
place, such a file would lock other users out of what the project writes for them to
share: a store's metadata, its kept predicates and label index, an export. So the file
is given the mode ``open()`` would give a new file (0666 less the process's umask).

>>> import pathlib, tempfile as t
>>> folder = pathlib.Path(t.mkdtemp())
>>> handle, name = temporary_beside(folder / "out.json", prefix=".out-")
>>> os.close(handle)
>>> oct(pathlib.Path(name).stat().st_mode & 0o777) == oct(0o666 & ~umask())
True
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def umask() -> int:
    """The process's umask now: from ``/proc/self/status`` where Linux gives it, else
    read by setting it (and setting it back at once)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def temporary_beside(target: Path, *, prefix: str, suffix: str = "") -> tuple[int, str]:
    """A new temporary file in ``target``'s folder (an open descriptor and its path),
    with the mode a new file gets from ``open()``."""
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=suffix)
    try:
        os.fchmod(handle, 0o666 & ~umask())
    except OSError:
        os.close(handle)
        os.unlink(name)
        raise
    return handle, name


def write_json(target: Path, data: Any, *, prefix: str) -> None:
    """Write ``data`` as JSON to ``target`` whole: into a temporary file beside it, then
    renamed over it (an OSError leaves ``target`` as it was and no temporary file)."""
    handle, temporary = temporary_beside(target, prefix=prefix)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise

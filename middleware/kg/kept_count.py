"""A store generation's triple count, kept in its folder for the next process.

Counting a store's triples walks every one of them: 7 s at 32 M triples, paid by every
process that checks whether a path memory still fits the data (its fingerprint holds
the count). A generation never changes once it is live, so its count is written next
to its data once (``kgmw-count.json``) and read back by any later process; a folder
that cannot be written just means the next process counts again.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> counted(folder, lambda: 42), counted(folder, lambda: 0)
(42, 42)
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

from middleware.support.temp_files import write_json

FILE_NAME = "kgmw-count.json"


def counted(folder: Path | None, count: Callable[[], int]) -> int:
    """The count kept in ``folder``; else ``count()``, kept there for later processes."""
    if folder is None:
        return count()
    path = folder / FILE_NAME
    try:
        kept = json.loads(path.read_text(encoding="utf-8")).get("triples")
    except (OSError, ValueError, AttributeError):
        kept = None
    if isinstance(kept, int) and not isinstance(kept, bool) and kept >= 0:
        return kept
    found = count()
    with contextlib.suppress(OSError):
        write_json(path, {"triples": found}, prefix=".count-")
    return found

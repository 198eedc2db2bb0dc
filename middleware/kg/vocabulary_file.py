"""The graph's predicates, kept in a store generation's folder for the next process.

Reading a graph's predicates is one scan of every triple (15 s at 32 M triples), and
every process that probes relation steps at a hub needs them. A generation never
changes once it is live (a load writes a new one), so its predicates are written next
to its data once (``kgmw-predicates.json``) and read back by any later process. The
file also records the predicates left out, so a store opened under another profile
reads its own. A folder that cannot be written just means the next process reads
them again.

>>> import tempfile, pathlib
>>> from pyoxigraph import NamedNode
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> keep(folder / FILE_NAME, ["urn:skip"], [NamedNode("urn:p")])
>>> kept(folder / FILE_NAME, ["urn:skip"]), kept(folder / FILE_NAME, ["urn:other"])
(([<NamedNode value=urn:p>],), None)
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from pyoxigraph import NamedNode

from middleware.support.temp_files import write_json

FILE_NAME = "kgmw-predicates.json"


def kept(path: Path | None, skipped: list[str]) -> tuple[list[NamedNode] | None] | None:
    """The predicates kept at ``path`` for ``skipped`` (in a 1-tuple; inside it, None
    when there were too many to probe); None when nothing usable is kept there."""
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("skipped") != skipped:
        return None
    predicates = data.get("predicates")
    if predicates is None:
        return (None,)
    if not isinstance(predicates, list) or not all(isinstance(p, str) for p in predicates):
        return None
    try:
        return ([NamedNode(p) for p in predicates],)
    except ValueError:  # not an IRI: the file is damaged
        return None


def keep(path: Path | None, skipped: list[str], predicates: list[NamedNode] | None) -> None:
    """Write ``predicates`` (None: too many to probe) to ``path`` atomically; a folder
    that cannot be written is left as it is."""
    if path is None:
        return
    data = {"skipped": skipped, "predicates": None}
    if predicates is not None:
        data["predicates"] = [p.value for p in predicates]
    with contextlib.suppress(OSError):
        write_json(path, data, prefix=".predicates-")

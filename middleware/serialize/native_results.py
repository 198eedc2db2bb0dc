"""SELECT results written by the engine itself, when they are small enough to be whole.

Building Python rows and writing them as JSON costs about as much again as a 1-hop
query; pyoxigraph writes the same SPARQL results formats natively. The row cap
(``sparql_max_rows``) still holds: the engine writes into a buffer that refuses more
than ``byte_cap`` bytes, the rows of what it wrote are counted, and a result past
either cap is not written here (``None``): the caller runs the query again through the
row-by-row path, which stops at the cap and marks the result cut.

>>> import pyoxigraph as ox
>>> store = ox.Store()
>>> store.add(ox.Quad(ox.NamedNode("http://ex.org/a"), ox.NamedNode("http://ex.org/p"),
...     ox.Literal("A", language="en")))
>>> write_native(store.query("SELECT ?o { ?s ?p ?o }"), "json", max_rows=10)
b'{"head":{"vars":["o"]},"results":{"bindings":[{"o":{"type":"literal","value":"A","xml:lang":"en"}}]}}'
>>> write_native(store.query("SELECT ?o { ?s ?p ?o }"), "json", max_rows=0) is None
True
"""

from __future__ import annotations

import json
from typing import IO, cast

import pyoxigraph as ox

# formats whose rows can be counted in the engine's output, and their engine names
NATIVE_FORMATS = {"json": ox.QueryResultsFormat.JSON, "xml": ox.QueryResultsFormat.XML}
BYTE_CAP = 1 << 20  # results written larger than this take the row-by-row path
MIN_ROW_BYTES = 3  # the shortest row: "{}," in JSON ("<result></result>" in XML)


class _Overflow(Exception):
    """The engine wrote past the byte cap."""


class _CappedBuffer:
    """A write-only buffer that raises once it would hold more than ``cap`` bytes."""

    __slots__ = ("cap", "chunks", "size")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.chunks: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.size += len(data)
        if self.size > self.cap:
            raise _Overflow
        self.chunks.append(data)
        return len(data)

    def flush(self) -> None:
        """Nothing to flush: the engine's writer asks."""


def write_native(
    result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples,
    fmt: str,
    *,
    max_rows: int | None,
    byte_cap: int = BYTE_CAP,
) -> bytes | None:
    """A SELECT ``result`` written by the engine in ``fmt`` (a key of NATIVE_FORMATS),
    or None when it is not a SELECT, ``fmt`` is not native, or it holds more than
    ``max_rows`` rows or ``byte_cap`` bytes (``result`` is spent either way). The
    engine's own errors (``OSError``, ``RuntimeError``) pass through."""
    engine_format = NATIVE_FORMATS.get(fmt)
    if engine_format is None or not isinstance(result, ox.QuerySolutions):
        return None
    out = _CappedBuffer(byte_cap)
    try:
        result.serialize(cast("IO[bytes]", out), format=engine_format)
    except _Overflow:
        return None
    body = b"".join(out.chunks)
    # every row takes at least MIN_ROW_BYTES, so a short body needs no count
    if (
        max_rows is not None
        and len(body) > MIN_ROW_BYTES * max_rows
        and _rows(body, fmt) > max_rows
    ):
        return None
    return body


def _rows(body: bytes, fmt: str) -> int:
    """How many solutions the engine's ``fmt`` output holds."""
    if fmt == "json":
        return len(json.loads(body)["results"]["bindings"])
    return body.count(b"<result>")  # XML: "<" in values is written as "&lt;"

"""Input files read under caps, so a crafted file cannot exhaust memory while loading.

- ``.gz`` input may not decompress to more than ``max_ratio`` times the compressed
  bytes read so far (once past ``RATIO_FLOOR``): real RDF compresses 5-30×, bombs 1000×.
- Line-based formats may not hold a line longer than ``max_line`` bytes (a parser
  buffers a whole line or statement).
- XML input (RDF/XML, TriX) is scanned whole with expat (:mod:`.xml_scan`): no DOCTYPE,
  whose entities expand without bound, no nesting deeper than ``max_xml_depth``, and
  well-formed throughout.
- Formats read whole (TriX, HexT through rdflib) may not exceed ``max_whole`` bytes.

The caps are settings (``load_max_ratio``, ``load_max_line_mib``, ``load_max_whole_mib``,
``load_max_xml_depth``).

Every refusal is a LoadError naming the file and the cap, raised after at most the
bytes needed to see it; the load it interrupts leaves the store unchanged.
"""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from middleware.errors import LoadError
from middleware.kg.xml_scan import XmlScan

RATIO_FLOOR = 16 << 20
LINE_FORMATS = {"nt", "nq", "ttl", "trig", "n3", "delimited"}
XML_FORMATS = {"rdfxml", "trix"}


@dataclass(frozen=True)
class LoadCaps:
    """How far input may go: expansion ratio of ``.gz``, longest line, whole-file size,
    XML element depth."""

    max_ratio: int = 200
    max_line: int = 16 << 20
    max_whole: int = 256 << 20
    max_xml_depth: int = 256

    @classmethod
    def from_settings(cls, settings: Any) -> LoadCaps:
        return cls(
            settings.load_max_ratio,
            settings.load_max_line_mib << 20,
            settings.load_max_whole_mib << 20,
            settings.load_max_xml_depth,
        )


DEFAULT_CAPS = LoadCaps()


class GuardedInput(io.RawIOBase):
    """A file's (decompressed) bytes, checked against the caps as they are read."""

    def __init__(
        self, path: Path, fmt: str, *, whole: bool = False, caps: LoadCaps = DEFAULT_CAPS
    ) -> None:
        self.caps = caps
        self.path = path
        self.raw = path.open("rb")
        self.gzipped = path.suffix.lower() == ".gz"
        self.inner: IO[bytes] = (
            cast(IO[bytes], gzip.GzipFile(fileobj=self.raw)) if self.gzipped else self.raw
        )
        self.lines = fmt in LINE_FORMATS
        self.whole = whole
        self.scan = XmlScan(str(path), caps.max_xml_depth) if fmt in XML_FORMATS else None
        self.total = 0
        self.run = 0  # bytes since the last line break
        self.error: LoadError | None = None  # what stopped the read, for the caller

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.error is not None:
            raise self.error
        count = self.inner.readinto(buffer)  # type: ignore[attr-defined]
        try:
            if count:
                self._check(bytes(memoryview(buffer)[:count]))
            elif self.scan is not None:
                self.scan.close()  # the end: an unfinished document is refused
        except LoadError as err:
            self.error = err  # every later read raises it too
            raise
        return int(count or 0)

    def close(self) -> None:
        self.inner.close()
        self.raw.close()
        super().close()

    def _check(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self.scan is not None:
            self.scan.feed(chunk)  # before the parser has these bytes
        caps = self.caps
        if (
            self.gzipped
            and self.total > RATIO_FLOOR
            and self.total > caps.max_ratio * self.raw.tell()
        ):
            self._refuse(
                f"decompresses to more than {caps.max_ratio}× its compressed size "
                f"({self.total:,} bytes from {self.raw.tell():,})",
                "if the file is genuine, decompress it yourself and load the plain file, "
                "or raise load_max_ratio",
            )
        if self.whole and self.total > caps.max_whole:
            self._refuse(
                f"is read whole by its parser and is larger than {caps.max_whole >> 20} MiB",
                "convert it to N-Quads or Turtle, which are read as a stream, "
                "or raise load_max_whole_mib",
            )
        if self.lines:
            newline = chunk.rfind(b"\n")
            self.run = len(chunk) - newline - 1 if newline >= 0 else self.run + len(chunk)
            if self.run > caps.max_line:
                self._refuse(
                    f"has a line longer than {caps.max_line >> 20} MiB",
                    "split the data into lines (one triple or statement per line), "
                    "or raise load_max_line_mib",
                )

    def _refuse(self, what: str, hint: str) -> None:
        raise LoadError(str(self.path), None, what, hint=hint)


def open_guarded(
    path: Path, fmt: str, *, whole: bool = False, caps: LoadCaps = DEFAULT_CAPS
) -> io.BufferedReader:
    """``path`` opened for reading under ``caps`` (``.gz`` decompressed)."""
    try:
        return io.BufferedReader(
            GuardedInput(path, fmt, whole=whole, caps=caps), buffer_size=1 << 16
        )
    except OSError as err:
        raise LoadError(str(path), None, f"cannot open: {err.strerror or err}") from err


def stopped_by(handle: io.BufferedReader) -> LoadError | None:
    """The cap that stopped reading ``handle``, if one did."""
    raw = handle.raw
    return raw.error if isinstance(raw, GuardedInput) else None

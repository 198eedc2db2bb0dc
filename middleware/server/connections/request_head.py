"""Where a request ends, read from its bytes as they arrive: the head's blank line, then
the body its head declares (``Content-Length``, or ``Transfer-Encoding: chunked``).

Only framing is read here; the HTTP server's own parser checks everything else once
the request is whole. A head whose framing cannot be read (two different lengths, a
length that is not a number, a transfer coding other than chunked) is passed on as it
is, with no body: the server's parser refuses it.

>>> head_end(b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\nrest")
27
>>> framing(b"POST / HTTP/1.1\\r\\nContent-Length: 12\\r\\n\\r\\n")
Framing(length=12, chunked=False, expects_continue=False)
>>> body = ChunkedBody(start=0, limit=100)
>>> body.end(b"5\\r\\nhello\\r\\n0\\r\\n"), body.end(b"5\\r\\nhello\\r\\n0\\r\\n\\r\\n")
(None, 15)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEAD_LIMIT = 65536  # bytes of request line and headers; past it, 431
_BLANK_LINE = re.compile(rb"\n\r?\n")  # the head ends at its first empty line
_FIELD = re.compile(
    rb"^(content-length|transfer-encoding|expect)[ \t]*:[ \t]*(.*?)[ \t]*\r?$", re.M
)
_HEX = re.compile(rb"[0-9a-fA-F]{1,16}")
_LINE_LIMIT = 4096  # bytes of a chunk-size line (extensions included) or of trailers


class TooLarge(Exception):
    """A chunked body whose chunks add up to more than its limit."""


def head_end(data: bytes | bytearray, start: int = 0) -> int:
    """The offset just past the head's blank line, -1 while it has not arrived;
    ``start``: where to look from (the blank line may straddle two reads)."""
    found = _BLANK_LINE.search(data, max(0, start - 3))
    return -1 if found is None else found.end()


@dataclass(frozen=True)
class Framing:
    """A head's body: ``length`` bytes (0: none), or chunks; whether the client waits
    for ``100 Continue`` before sending it."""

    length: int = 0
    chunked: bool = False
    expects_continue: bool = False


def framing(head: bytes | bytearray) -> Framing:
    """The body ``head`` declares; no body when it cannot be read (the parser refuses it)."""
    lengths, codings, expects = set(), [], False
    for name, value in _FIELD.findall(bytes(head).lower()):
        if name == b"content-length":
            lengths.add(value)
        elif name == b"transfer-encoding":
            codings += [c.strip() for c in value.split(b",")]
        else:
            expects = value == b"100-continue"
    if codings:
        chunked = codings[-1] == b"chunked"
        return Framing(chunked=chunked, expects_continue=expects and chunked)
    if len(lengths) != 1:
        return Framing()
    value = lengths.pop()
    if not value.isdigit() or len(value) > 18:
        return Framing()
    length = int(value)
    return Framing(length, expects_continue=expects and length > 0)


class ChunkedBody:
    """The end of a chunked body that starts at ``start``, found as its bytes arrive;
    ``TooLarge`` as soon as its chunks declare more than ``limit`` bytes."""

    def __init__(self, start: int, limit: int) -> None:
        self._at = start  # the next chunk-size line
        self._limit = limit
        self.size = 0  # bytes of the chunks passed so far

    def end(self, data: bytes | bytearray) -> int | None:
        """The offset just past the body (its last chunk and trailers), None while more
        must come; a chunk-size line that is not one ends the body there (the parser
        refuses it)."""
        while True:
            line_end = data.find(b"\r\n", self._at)
            if line_end < 0:
                return len(data) if len(data) - self._at > _LINE_LIMIT else None
            size_text = bytes(data[self._at : line_end]).split(b";", 1)[0].strip()
            if not _HEX.fullmatch(size_text):
                return line_end + 2
            size = int(size_text, 16)
            if size == 0:
                trailers = data.find(b"\r\n\r\n", line_end)
                if trailers < 0:
                    return len(data) if len(data) - line_end > _LINE_LIMIT else None
                return trailers + 4
            self.size += size
            if self.size > self._limit:
                raise TooLarge(self.size)
            after = line_end + 2 + size + 2
            if len(data) < after:
                return None
            self._at = after

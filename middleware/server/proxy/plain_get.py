"""Reading a plain ``GET /sparql`` off a connection without an HTTP server's machinery.

Werkzeug's request handler (the ``email`` header parser, its environ, its response
writer, its drain after the response) costs about 0.2 ms a request, as much as the
query. ``parse_plain_get`` reads a request that has arrived whole (``intake``) and
accepts only the simplest: a complete head of at most
``HEAD_LIMIT`` bytes, ``GET /sparql?...`` in HTTP/1.0 or 1.1 with printable ASCII in
the target, well-formed header lines (token names, no control characters, no folded
lines, at most ``MAX_HEADERS``), no body, no ``Expect`` or ``Upgrade``, no forwarded
scheme (gunicorn reads ``X-Forwarded-Proto`` from a proxy on loopback), nothing the
``/sparql`` fast path would pass on to Flask (``sparql_fast.plain_query``). Anything
else goes to the full handler.
"""

from __future__ import annotations

import re
import socket
import sys
from dataclasses import dataclass
from email.utils import formatdate
from io import BytesIO
from typing import Any, Protocol, runtime_checkable

from middleware.server.proxy.direct_reply import ENVIRON_KEY as DIRECT
from middleware.server.proxy.direct_reply import DirectReply
from middleware.server.proxy.sparql_fast import plain_query

HEAD_LIMIT = 8192  # bytes of request line and headers
MAX_HEADERS = 100
_TARGET = re.compile(rb"/sparql\?[\x21-\x22\x24-\x7e]*")  # printable ASCII, no '#'
_HEADER = re.compile(rb"([!#$%&'*+.^`|~0-9A-Za-z-]+):[ \t]*([\x20-\x7e\t]*?)[ \t]*")
_REFUSED = frozenset(  # a body, or a scheme a proxy in front may set (gunicorn heeds them)
    (
        "CONTENT_LENGTH",
        "HTTP_TRANSFER_ENCODING",
        "HTTP_EXPECT",
        "HTTP_UPGRADE",
        "HTTP_FORWARDED",
        "HTTP_X_FORWARDED_PROTO",
        "HTTP_X_FORWARDED_PROTOCOL",
        "HTTP_X_FORWARDED_SSL",
    )
)


@dataclass(frozen=True)
class PlainGet:
    """A request head the lean path serves: its request line and environ."""

    request_line: str
    environ: dict[str, Any]


def parse_plain_get(
    data: bytes, sock: socket.socket, client: Any, server: tuple[str, int], software: str
) -> PlainGet | None:
    """The plain ``GET /sparql`` ``data`` (a request come whole on ``sock``) starts
    with; None for any other request (for the full handler)."""
    end = data.find(b"\r\n\r\n", 0, HEAD_LIMIT)
    if end < 0:
        return None
    lines = data[:end].split(b"\r\n")
    parts = lines[0].split(b" ")
    if (
        len(parts) != 3
        or parts[0] != b"GET"
        or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0")
        or not _TARGET.fullmatch(parts[1])
        or len(lines) - 1 > MAX_HEADERS
    ):
        return None
    target = parts[1].decode("ascii")
    environ = _environ(target, parts[2].decode("ascii"), client, server, software, sock)
    for line in lines[1:]:
        header = _HEADER.fullmatch(line)
        if header is None or b"_" in header[1]:
            return None
        key = header[1].decode("ascii").upper().replace("-", "_")
        if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            key = f"HTTP_{key}"
        if key in _REFUSED:
            return None
        value = header[2].decode("ascii")
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    if plain_query(environ) is None:
        return None
    return PlainGet(lines[0].decode("ascii"), environ)


def _environ(
    target: str,
    protocol: str,
    client: Any,
    server: tuple[str, int],
    software: str,
    sock: socket.socket,
) -> dict[str, Any]:
    """The WSGI environ Werkzeug's development server makes for such a request."""
    return {
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": BytesIO(),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        "werkzeug.socket": sock,
        "SERVER_SOFTWARE": software,
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": "/sparql",
        "QUERY_STRING": target.partition("?")[2],
        "REQUEST_URI": target,
        "RAW_URI": target,
        "REMOTE_ADDR": str(client[0]),
        "REMOTE_PORT": client[1],
        "SERVER_NAME": server[0],
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": protocol,
    }


@dataclass(frozen=True)
class PlainAnswer:
    """What was sent, for the access log: the status, the app's headers, the body size."""

    status: str
    headers: list[tuple[str, str]]
    sent: int


def answer_plain_get(app: Any, sock: socket.socket, plain: PlainGet, software: str) -> PlainAnswer:
    """Run ``app`` on ``plain`` and send its response on ``sock`` in one write, worded
    as the servers word theirs (``Server: software``, ``Date``, ``Connection: close``)."""
    started: list[Any] = []
    direct = DirectReply(software)  # the executor may answer on ``sock`` itself
    plain.environ[DIRECT] = direct

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        started[:] = [status, headers]  # nothing is sent before the app returns
        return chunks.append

    chunks: list[bytes] = []
    result = app(plain.environ, start_response)
    try:
        chunks.extend(result)
    finally:
        if isinstance(result, Closeable):
            result.close()
    status, headers = started
    body = b"".join(chunks)
    if direct.written:  # the executor sent the response; ``body`` is what it left
        if body:
            sock.sendall(body)
        return PlainAnswer(status, headers, direct.size)
    lines = [f"HTTP/1.1 {status}", f"Server: {software}", f"Date: {formatdate(usegmt=True)}"]
    lines += [f"{name}: {value}" for name, value in headers]
    if not any(name.lower() == "content-length" for name, _ in headers):
        lines.append(f"Content-Length: {len(body)}")
    lines += ["Connection: close", "", ""]
    sock.sendall("\r\n".join(lines).encode("latin-1") + body)
    return PlainAnswer(status, headers, len(body))


@runtime_checkable
class Closeable(Protocol):
    """A WSGI response iterable with ``close`` (PEP 3333: the server calls it)."""

    def close(self) -> None: ...

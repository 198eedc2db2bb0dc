"""A result an executor writes straight onto the caller's connection.

For a plain ``GET /sparql`` the service passes the caller's socket to the executor with
the job and the head of a 200 response (``Delivery``); once the query has run, the
executor sends the whole response with one non-blocking write (``send_once``). What
the write could not send comes back to the service, which sends it: only the service
ever waits on a slow reader. A task whose result can be delivered so returns
``Written``: the body in the negotiated format, its kind and whether it was cut.

>>> response(b"HTTP/1.1 200 OK\\r\\n", b"{}", b"").split(b"\\r\\n")
[b'HTTP/1.1 200 OK', b'Content-Length: 2', b'Connection: close', b'', b'{}']
"""

from __future__ import annotations

import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class Written:
    """A query's result already in its response format."""

    body: bytes
    kind: str
    truncated: bool


@dataclass(frozen=True)
class Delivery:
    """A caller's connection the executor answers on: the response's head (status
    line and headers before the length) and the header line marking a cut result."""

    sock: socket.socket
    head: bytes
    cut: bytes


def response(head: bytes, body: bytes, extra: bytes) -> bytes:
    """The whole response: ``head``, ``extra`` header lines, the length, the body."""
    return b"%sContent-Length: %d\r\n%sConnection: close\r\n\r\n%s" % (
        head,
        len(body),
        extra,
        body,
    )


def send_once(sock: socket.socket, data: bytes) -> bytes:
    """Send what ``sock`` takes without waiting; the bytes it did not take (all of them
    when the client has gone: the service meets the error when it sends them)."""
    try:
        sent = sock.send(data, socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
    except OSError:  # BlockingIOError included: nothing went
        return data
    return data[sent:]

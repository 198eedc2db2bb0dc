"""A request arriving on a connection: its bytes so far, when it is whole, its deadline.

Deadlines (``Limits``, from the ``server_*`` settings): the head must arrive within
``head_seconds`` of the accept; the body then gets ``head_seconds`` more, plus one
second for every ``body_rate`` bytes that came; and the whole request must arrive
within ``request_seconds`` of the accept. A body declared longer than ``max_body``
is not waited for (the app answers 413); a chunked body past it is refused here (413),
as is a head past ``HEAD_LIMIT`` bytes (431).

>>> left, right = socket.socketpair()
>>> arrival = Arrival(left, ("127.0.0.1", 5), left, Limits(), now=0.0)
>>> arrival.take(b"POST /x HTTP/1.1\\r\\nContent-Length: 3\\r\\n\\r\\nab", now=0.1)
'more'
>>> arrival.take(b"c", now=0.2), arrival.request[-3:]
('whole', b'abc')
>>> left.close(); right.close()
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, Literal

from middleware.config import Settings
from middleware.errors import MiddlewareError, PayloadTooLarge
from middleware.server.connections.request_head import (
    HEAD_LIMIT,
    ChunkedBody,
    TooLarge,
    framing,
    head_end,
)
from middleware.server.errors import OPENAI_ROUTES, error_body

Step = Literal["more", "whole", "refused"]
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


@dataclass(frozen=True)
class Limits:
    """How long a request may take to arrive, and how large its body may be."""

    head_seconds: float = 10.0
    body_rate: float = 1024.0  # bytes a second, at least
    request_seconds: float = 60.0
    send_seconds: float = 60.0  # a response write to a client that reads nothing
    max_body: int = 1_048_576
    send_budget: int = 256 << 20  # unsent response bytes a process holds at most

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        """The limits ``settings`` set (``server_head_timeout`` and the rest)."""
        return cls(
            settings.server_head_timeout,
            settings.server_body_rate,
            settings.server_request_timeout,
            settings.server_send_timeout,
            settings.server_max_body,
            settings.server_send_buffer_mb << 20,
        )


class Arrival:
    """A connection whose request is arriving (``take`` its bytes as they come)."""

    def __init__(
        self,
        sock: socket.socket,
        address: Any,
        listener: socket.socket,
        limits: Limits,
        now: float,
    ) -> None:
        self.sock = sock
        self.address = address
        self.listener = listener  # the socket it came in on
        self.limits = limits
        self.accepted = now
        self.deadline = now + min(limits.head_seconds, limits.request_seconds)
        self.data: bytes | bytearray = b""
        self.head = -1  # the head's length, once whole
        self.interim = b""  # to send now: 100 Continue
        self.refusal = b""  # to send before closing
        self.unread_body = False  # handed on without the body it declared (too large)
        self._length = 0  # bytes of head and body, for a body of known length
        self._chunks: ChunkedBody | None = None
        self._body_since = 0.0

    @property
    def request(self) -> bytes:
        """Every byte that came, the head first."""
        return bytes(self.data)

    def take(self, chunk: bytes, now: float) -> Step:
        """Add ``chunk``; what the request is now: "more" to come, "whole", or
        "refused" (``refusal`` is the response)."""
        before = len(self.data)
        self.data = chunk if not before else _joined(self.data, chunk)
        if self.head < 0:
            self.head = head_end(self.data, before)
            if self.head < 0:
                if len(self.data) <= HEAD_LIMIT:
                    return "more"
                self.refusal = self.respond(
                    431,
                    "request_header_fields_too_large",
                    f"the request head is longer than {HEAD_LIMIT} bytes",
                    "send a shorter head",
                )
                return "refused"
            return self._head_arrived(now)
        return self._body_step(now)

    def _head_arrived(self, now: float) -> Step:
        body = framing(self.data[: self.head])
        self._body_since = now
        if body.chunked:
            self._chunks = ChunkedBody(self.head, self.limits.max_body)
        elif not body.length:
            return "whole"
        elif body.length > self.limits.max_body:
            self.unread_body = True  # the app refuses it (413) before reading it
            return "whole"
        self._length = self.head + body.length
        step = self._body_step(now)
        if step == "more" and body.expects_continue and len(self.data) == self.head:
            self.interim = CONTINUE
        return step

    def _body_step(self, now: float) -> Step:
        if self._chunks is None:
            whole = len(self.data) >= self._length
        else:
            try:
                end = self._chunks.end(self.data)
            except TooLarge:
                limit = self.limits.max_body
                err = PayloadTooLarge(
                    f"the streamed request body is longer than {limit} bytes",
                    hint="send less, or raise server_max_body",
                )
                self.refusal = self._render(err)
                return "refused"
            whole = end is not None
        if whole:
            return "whole"
        came = len(self.data) - self.head
        allowed = self.limits.head_seconds + came / self.limits.body_rate
        self.deadline = min(self.accepted + self.limits.request_seconds, self._body_since + allowed)
        return "more"

    def too_late(self) -> bytes:
        """The 408 response for a request that missed its deadline; nothing when not a
        byte of it came."""
        if not self.data:
            return b""
        if self.head < 0:
            setting, part = "server_head_timeout", "request head"
        elif self.deadline >= self.accepted + self.limits.request_seconds:
            setting, part = "server_request_timeout", "request"
        else:
            setting, part = "server_body_rate", "request body"
        message = f"the {part} did not arrive in time ({setting})"
        return self.respond(408, "request_timeout", message, "send the whole request at once")

    def respond(self, status: int, code: str, message: str, hint: str) -> bytes:
        """A complete error response, shaped as the app shapes its errors."""
        err = MiddlewareError(message, hint=hint)
        err.status, err.code = status, code
        return self._render(err)

    def _render(self, err: MiddlewareError) -> bytes:
        line = bytes(self.data[:512]).split(b"\r\n", 1)[0].split(b" ")
        path = line[1].split(b"?", 1)[0].decode("latin-1") if len(line) > 1 else ""
        body, status = error_body(err, openai_shape=path in OPENAI_ROUTES)
        text = json.dumps(body).encode()
        head = (
            f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
            f"Date: {formatdate(usegmt=True)}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(text)}\r\nConnection: close\r\n\r\n"
        )
        return head.encode("latin-1") + text


def _joined(data: bytes | bytearray, chunk: bytes) -> bytearray:
    grown = data if isinstance(data, bytearray) else bytearray(data)
    grown += chunk
    return grown

"""What a serving thread waits for: a connection whose request has arrived whole.

Both servers (``loopback_server``, ``gunicorn_workers``) run serving threads that each
wait on their own ``epoll``: the listening sockets and the reader's ``ready`` count,
both with ``EPOLLEXCLUSIVE`` (the kernel wakes one idle thread per connection or
request, across gunicorn's workers too, so a worker whose threads are all busy takes
nothing). A thread that accepts a connection asks the address gate first (a refused
address goes to the tarpit unread), then reads what has come without waiting: a
whole request (the usual case: it came with the connection) is served on that
thread, with no hand-over; anything less goes to the process's ``RequestReader``,
and the thread waits again. So a serving thread only ever runs the app on a whole
request, and no client that sends slowly, or nothing, holds one.

Served connections are ``OutboxSocket``s: what a client does not read at once is sent
by the process's ``ResponseSender`` once the response is done, so a slow reader holds
no serving thread either (``response_sender.py``). They also get ``SO_SNDTIMEO``
(``server_send_timeout``) for the writes that still wait.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

from middleware.server.connections.address_gate import AddressGate
from middleware.server.connections.arrival import Arrival, Limits
from middleware.server.connections.request_reader import READ_SIZE, RequestReader, send_now
from middleware.server.connections.response_sender import OutboxSocket, ResponseSender, SendBudget
from middleware.server.connections.tarpit import Tarpit
from middleware.server.proxy.plain_get import PlainGet, parse_plain_get

BACK_OFF = 0.1  # seconds a thread waits after accept failed (out of file descriptors)
_WATCHED = select.EPOLLIN | select.EPOLLEXCLUSIVE


class Intake:
    """Accepts on ``listeners`` and hands each serving thread its next whole request."""

    def __init__(
        self,
        listeners: list[socket.socket],
        limits: Limits,
        *,
        gate: AddressGate | None = None,
        pit: Tarpit | None = None,
        software: str = "",
        plain_gets: bool = True,
        on_accept_error: Callable[[OSError], None] | None = None,
    ) -> None:
        for listener in listeners:
            listener.setblocking(False)  # a woken thread may find the connection taken
        self._listeners = {listener.fileno(): listener for listener in listeners}
        self._names = {fd: _name(listener) for fd, listener in self._listeners.items()}
        self.limits = limits
        self.reader = RequestReader()
        self.budget = SendBudget(limits.send_budget)  # unsent response bytes kept
        self.sender = ResponseSender(limits.send_seconds)
        self._gate = gate
        self._pit = pit or Tarpit(0.0)
        self._software = software
        self._plain_gets = plain_gets
        self._on_accept_error = on_accept_error
        seconds = max(limits.send_seconds, 0.001)
        self._send_timeout = struct.pack("ll", int(seconds), int(seconds % 1 * 1_000_000))

    def poller(self, stop: int) -> select.epoll:
        """A serving thread's own ``epoll``; ``stop`` (a descriptor) readable ends its wait."""
        poller = select.epoll()
        for fd in self._listeners:
            poller.register(fd, _WATCHED)
        poller.register(self.reader.ready, _WATCHED)
        poller.register(stop, select.EPOLLIN)
        return poller

    def next(self, poller: select.epoll) -> Arrival | None:
        """The next whole request for this thread; None once ``stop`` is readable."""
        while True:
            for fd, _ in poller.poll():
                if fd == self.reader.ready:
                    arrival = self.reader.take()
                elif fd in self._listeners:
                    arrival = self._accept(self._listeners[fd])
                else:
                    return None
                if arrival is not None:
                    return self._serving(arrival)

    def plain(self, arrival: Arrival) -> PlainGet | None:
        """The plain ``GET /sparql`` ``arrival`` is, for the lean path; None for others."""
        if not self._plain_gets:
            return None
        name = self._names.get(arrival.listener.fileno(), ("", 0))
        return parse_plain_get(arrival.request, arrival.sock, arrival.address, name, self._software)

    def finish(self, arrival: Arrival) -> None:
        """Close a served connection once its response is sent (``ResponseSender``: the
        rest of a response the client reads slowly), at once when its client has nothing
        more on the way, else once it closes (``RequestReader.linger``)."""
        sock = arrival.sock
        if isinstance(sock, OutboxSocket) and sock.pending:
            handed = self.sender.hand(
                sock, lambda ok: self._closed(arrival) if ok else _close(sock)
            )
            if not handed:
                _close(sock)  # more unsent than the process holds: its client was not reading
            return
        self._closed(arrival)

    def _closed(self, arrival: Arrival) -> None:
        sock = arrival.sock
        try:
            sock.shutdown(socket.SHUT_WR)
            left = sock.recv(READ_SIZE, socket.MSG_DONTWAIT)
        except BlockingIOError:  # nothing unread
            left = b"?" if arrival.unread_body else b""
        except OSError:
            left = b""
        if left:
            self.reader.linger(sock)
        else:
            _close(sock)

    def close(self) -> None:
        self.reader.close()
        self.sender.close()

    def _accept(self, listener: socket.socket) -> Arrival | None:
        try:
            sock, address = listener.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return None  # another thread or worker took it
        except OSError as err:  # out of file descriptors or buffers: let some close
            if self._on_accept_error is not None:
                self._on_accept_error(err)
            time.sleep(BACK_OFF)
            return None
        host = address[0] if isinstance(address, tuple) and address else ""
        if self._gate is not None and isinstance(host, str) and self._gate.refused(host):
            self._pit.hold(sock)
            return None
        arrival = Arrival(sock, address, listener, self.limits, time.monotonic())
        try:
            chunk = sock.recv(READ_SIZE, socket.MSG_DONTWAIT)
        except BlockingIOError:  # nothing yet
            self.reader.watch(arrival)
            return None
        except OSError:
            chunk = b""
        if not chunk:  # gone already
            _close(sock)
            return None
        step = arrival.take(chunk, arrival.accepted)
        if step == "whole":
            return arrival
        if step == "refused":
            send_now(sock, arrival.refusal)
            arrival.unread_body = True
            self.finish(arrival)
            return None
        if arrival.interim:
            send_now(sock, arrival.interim)
            arrival.interim = b""
        self.reader.watch(arrival)
        return None

    def _serving(self, arrival: Arrival) -> Arrival:
        with contextlib.suppress(OSError):
            arrival.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, self._send_timeout)
        arrival.sock = OutboxSocket.taking(arrival.sock, self.budget)  # writes never wait
        return arrival


def _name(listener: socket.socket) -> tuple[str, int]:
    try:
        name: Any = listener.getsockname()
    except OSError:
        return ("", 0)
    if isinstance(name, tuple):
        return (str(name[0]), int(name[1]))
    return (str(name), 0)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()

"""Responses a client reads slowly are sent by one thread per process, not by the
serving thread.

A served connection is an ``OutboxSocket``: its writes never wait on the client. What
the client's buffer does not take at once is kept, in order, and once the response is
done its serving thread hands the connection to the ``ResponseSender`` and takes the
next request. The sender writes as the client reads, within ``server_send_timeout``.
Every byte kept counts against one ``SendBudget`` per process
(``server_send_buffer_mb``), from the moment it is kept until it is sent or dropped: a
write that would take it past the budget fails (the connection is closed: its client
was not reading). So clients that read slowly, or not at all, hold no serving thread
and a bounded share of memory, however many they are.

A response that grows past ``PER_CONNECTION`` while its request is being served
(a long stream to a client that does not read) is written in place instead, as
before, bounded by ``server_send_timeout`` (``SO_SNDTIMEO``).
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PER_CONNECTION = 64 << 20  # bytes one connection may keep unsent while it is served
CHUNK = 1 << 18
_QUIET = socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL


class SendBudget:
    """Bytes of unsent responses a process may hold, counted as they are kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self.refused = 0  # writes refused because the budget was spent
        self._lock = threading.Lock()

    def take(self, size: int) -> bool:
        with self._lock:
            if self.held + size > self.limit:
                self.refused += 1
                return False
            self.held += size
            return True

    def give(self, size: int) -> None:
        with self._lock:
            self.held -= size


class OutboxSocket(socket.socket):
    """A served connection whose ``sendall`` never waits on the client (see the module)."""

    pending: bytearray
    budget: SendBudget
    broken: bool  # a write was refused: what is kept is not a whole response

    @classmethod
    def taking(cls, sock: socket.socket, budget: SendBudget) -> OutboxSocket:
        """``sock``'s connection as an OutboxSocket (``sock`` itself is detached)."""
        family, kind, proto = sock.family, sock.type, sock.proto
        timeout = sock.gettimeout()
        outbox = cls(family, kind, proto, fileno=sock.detach())
        outbox.settimeout(timeout)
        outbox.pending = bytearray()
        outbox.budget = budget
        outbox.broken = False
        return outbox

    def drop(self) -> None:
        """Let go of what is kept (the connection is closing without it)."""
        self.budget.give(len(self.pending))
        self.pending = bytearray()

    def sendall(self, data: Any, flags: int = 0) -> None:
        view = memoryview(data).cast("B")
        if not self.pending:
            with contextlib.suppress(BlockingIOError):
                view = view[super().send(view, flags | _QUIET) :]
        if not len(view):
            return
        if len(self.pending) + len(view) <= PER_CONNECTION:
            if not self.budget.take(len(view)):
                self.broken = True
                raise BrokenPipeError(
                    "server_send_buffer_mb is spent on clients that read slowly; "
                    "this one's response is dropped"
                )
            self.pending += view
            return
        self.flush()  # a stream past the cap: in place, bounded by SO_SNDTIMEO
        super().sendall(view, flags)

    def send(self, data: Any, flags: int = 0) -> int:
        self.sendall(data, flags)
        return len(memoryview(data).cast("B"))

    def flush(self) -> None:
        """Send what is kept, waiting for the client (bounded by ``SO_SNDTIMEO``)."""
        if self.pending:
            kept, self.pending = self.pending, bytearray()
            self.budget.give(len(kept))
            super().sendall(kept)


@dataclass
class _Sending:
    sock: OutboxSocket
    done: Callable[[bool], None]  # told whether all of it went
    deadline: float


class ResponseSender:
    """One thread that finishes sending handed-over responses (see the module)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds  # from the hand-over to the last byte, at most
        self._sending: dict[int, _Sending] = {}
        self._lock = threading.Lock()
        self._poller = select.epoll()
        self._thread: threading.Thread | None = None
        self._closed = False

    def hand(self, sock: OutboxSocket, done: Callable[[bool], None]) -> bool:
        """Finish sending ``sock``'s kept bytes, then call ``done(True)`` (``done(False)``
        when the client did not read them in time); False once the sender is closed."""
        with self._lock:
            if self._closed:
                return False
            self._sending[sock.fileno()] = _Sending(sock, done, time.monotonic() + self.seconds)
            self._poller.register(sock.fileno(), select.EPOLLOUT)
            if self._thread is None:  # started on first use: in gunicorn, in the worker
                self._thread = threading.Thread(target=self._run, daemon=True, name="kgmw-send")
                self._thread.start()
        return True

    def close(self) -> None:
        with self._lock:
            self._closed = True
            sending, self._sending = list(self._sending.values()), {}
        for item in sending:
            item.sock.drop()
            item.done(False)
        with contextlib.suppress(OSError):
            self._poller.close()

    def _run(self) -> None:
        while not self._closed:
            try:
                events = self._poller.poll(0.5)
            except (OSError, ValueError):
                return
            for fd, _ in events:
                self._write(fd)
            self._expire()

    def _write(self, fd: int) -> None:
        with self._lock:
            item = self._sending.get(fd)
        if item is None:
            return
        pending = item.sock.pending
        try:
            sent = socket.socket.send(item.sock, memoryview(pending)[:CHUNK], _QUIET)
        except BlockingIOError:
            return
        except OSError:
            self._end(fd, ok=False)
            return
        del pending[:sent]
        item.sock.budget.give(sent)
        if not pending:
            self._end(fd, ok=True)

    def _expire(self) -> None:
        now = time.monotonic()
        with self._lock:
            late = [fd for fd, item in self._sending.items() if item.deadline < now]
        for fd in late:
            self._end(fd, ok=False)

    def _end(self, fd: int, *, ok: bool) -> None:
        with self._lock:
            item = self._sending.pop(fd, None)
            if item is None:
                return
            with contextlib.suppress(OSError, ValueError):
                self._poller.unregister(fd)
        item.sock.drop()
        item.done(ok)

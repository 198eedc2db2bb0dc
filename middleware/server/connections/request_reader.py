"""One thread per process that watches connections whose request has not arrived whole,
so that no serving thread ever waits on a client.

A serving thread accepts a connection and reads what is there without waiting; a
request that is not whole yet (the client is slow, idle, or sending a large body) goes
to ``watch``. The reader reads it, never blocking (``epoll``), until it is whole, then
queues it for the serving threads: ``ready`` (an eventfd, one count per request)
becomes readable and ``take`` hands it out. A request that misses its deadline
(``Arrival``: head, body rate, whole request) is answered 408 and closed; one refused
as it arrives (431, 413) likewise. Past ``most`` connections watched, the one watched
longest is closed to make room.

It also closes served connections whose client still sends (``linger``): the write
side is shut, what comes is read and dropped until the client closes or ``LINGER``
seconds pass, so that unread input does not turn the close into a reset that could
cut the response. The thread starts with the first connection (under gunicorn, in
the forked worker).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import os
import resource
import select
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass

from middleware.server.connections.arrival import Arrival

log = logging.getLogger("middleware.server")
READ_SIZE = 65536  # bytes asked of one recv
_TURN = 16  # recvs for one connection per wake-up (1 MiB), so none starves the rest
LINGER = 2.0  # seconds a closing connection is drained, at most
_LINGER_BYTES = 1 << 20  # and bytes


@dataclass
class _Closing:
    """A served connection waiting for its client to close."""

    sock: socket.socket
    deadline: float
    drained: int = 0


def most_watched() -> int:
    """Connections one process watches at most: half its file descriptors, up to 4096."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 4096 if soft == resource.RLIM_INFINITY else max(64, min(4096, soft // 2))


class RequestReader:
    """Watches arriving requests and closing connections without blocking; whole
    requests come out of ``take`` once ``ready`` is readable."""

    def __init__(self, most: int | None = None) -> None:
        self.most = most or most_watched()
        self.ready = os.eventfd(0, os.EFD_SEMAPHORE | os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._wake = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._poller = select.epoll()
        self._poller.register(self._wake, select.EPOLLIN)
        self._inbox: deque[Arrival | _Closing] = deque()  # from the serving threads
        self._whole: deque[Arrival] = deque()  # to them
        # by file descriptor, oldest first, each with the number of its entry in ``_due``
        self._watched: dict[int, tuple[int, Arrival | _Closing]] = {}
        self._due: list[tuple[float, int, int]] = []  # a heap: deadline, number, descriptor
        self._order = itertools.count()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    def watch(self, arrival: Arrival) -> None:
        """Read ``arrival`` until its request is whole (then ``take`` hands it out) or
        its deadline passes (then it is closed)."""
        self._post(arrival)

    def linger(self, sock: socket.socket) -> None:
        """Close ``sock``, whose write side is shut, once its client has closed too."""
        self._post(_Closing(sock, time.monotonic() + LINGER))

    def take(self) -> Arrival | None:
        """A whole request, if one is waiting (``ready`` is readable while one is)."""
        try:
            os.eventfd_read(self.ready)
        except OSError:  # another thread took it (or the reader is closed)
            return None
        return self._whole.popleft()

    def close(self) -> None:
        """Stop the thread and close every connection it holds."""
        with self._lock:
            self._closed = True
            thread = self._thread
        os.eventfd_write(self._wake, 1)
        if thread is not None:
            thread.join(5)
        for item in [*(item for _, item in self._watched.values()), *self._inbox, *self._whole]:
            _close(item.sock)
        self._watched.clear()
        self._inbox.clear()
        self._whole.clear()
        self._poller.close()
        os.close(self._wake)
        os.close(self.ready)

    def _post(self, item: Arrival | _Closing) -> None:
        with self._lock:
            if self._closed:
                _close(item.sock)
                return
            self._inbox.append(item)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True, name="kgmw-reader")
                self._thread.start()
            os.eventfd_write(self._wake, 1)  # under the lock: ``close`` closes it

    def _run(self) -> None:
        while not self._closed:
            wait = max(0.0, self._due[0][0] - time.monotonic()) if self._due else -1.0
            events = self._poller.poll(wait)
            now = time.monotonic()
            for fd, _ in events:
                try:
                    self._handle(fd, now)
                except Exception:  # a bug must cost one connection, not the reader
                    log.exception("the request reader failed on a connection")
                    if fd in self._watched:
                        _close(self._unwatch(fd).sock)
            self._expire(now)

    def _handle(self, fd: int, now: float) -> None:
        if fd == self._wake:
            self._admit(now)
        elif fd in self._watched:
            item = self._watched[fd][1]
            if isinstance(item, Arrival):
                self._read(fd, item, now)
            else:
                self._drain(fd, item)

    def _admit(self, now: float) -> None:
        with contextlib.suppress(BlockingIOError):
            os.eventfd_read(self._wake)
        while self._inbox:
            item = self._inbox.popleft()
            if len(self._watched) >= self.most:  # full: the one watched longest goes
                self._end(self._unwatch(next(iter(self._watched))), linger=False)
            self._add(item)

    def _read(self, fd: int, arrival: Arrival, now: float) -> None:
        for _ in range(_TURN):  # level-triggered: the rest on the next turn
            try:
                chunk = arrival.sock.recv(READ_SIZE, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:  # the client left
                self._unwatch(fd)
                _close(arrival.sock)
                return
            step = arrival.take(chunk, now)
            if step == "more":
                if arrival.interim:
                    send_now(arrival.sock, arrival.interim)
                    arrival.interim = b""
                continue
            self._unwatch(fd)
            if step == "whole":
                self._whole.append(arrival)
                os.eventfd_write(self.ready, 1)
            else:
                send_now(arrival.sock, arrival.refusal)
                self._shut(arrival.sock, now)
            return

    def _drain(self, fd: int, closing: _Closing) -> None:
        try:
            chunk = closing.sock.recv(READ_SIZE, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        closing.drained += len(chunk)
        if not chunk or closing.drained > _LINGER_BYTES:
            self._unwatch(fd)
            _close(closing.sock)

    def _expire(self, now: float) -> None:
        while self._due and self._due[0][0] <= now:
            _, number, fd = heapq.heappop(self._due)
            watched = self._watched.get(fd)
            if watched is None or watched[0] != number:
                continue  # gone already
            item = watched[1]
            if item.deadline > now:  # the body came on: its deadline moved
                self._watched[fd] = (self._schedule(item.deadline, fd), item)
                continue
            self._end(self._unwatch(fd), linger=True)

    def _end(self, item: Arrival | _Closing, *, linger: bool) -> None:
        """Close a connection that ran out of time (408 first, when part of a request came)."""
        reply = item.too_late() if isinstance(item, Arrival) else b""
        if reply and send_now(item.sock, reply) and linger:
            self._shut(item.sock, time.monotonic())
        else:
            _close(item.sock)

    def _shut(self, sock: socket.socket, now: float) -> None:
        """Shut ``sock``'s write side and drain it until its client closes."""
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            _close(sock)
            return
        self._add(_Closing(sock, now + LINGER))

    def _add(self, item: Arrival | _Closing) -> None:
        try:
            fd = item.sock.fileno()
            self._poller.register(fd, select.EPOLLIN)
        except (OSError, ValueError):  # closed meanwhile
            _close(item.sock)
            return
        self._watched[fd] = (self._schedule(item.deadline, fd), item)

    def _schedule(self, deadline: float, fd: int) -> int:
        number = next(self._order)
        heapq.heappush(self._due, (deadline, number, fd))
        return number

    def _unwatch(self, fd: int) -> Arrival | _Closing:
        with contextlib.suppress(OSError, ValueError):
            self._poller.unregister(fd)
        return self._watched.pop(fd)[1]


def send_now(sock: socket.socket, data: bytes) -> bool:
    """Send what ``sock`` takes of ``data`` without waiting; whether it took any."""
    try:
        return sock.send(data, socket.MSG_DONTWAIT) > 0
    except OSError:
        return False


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()

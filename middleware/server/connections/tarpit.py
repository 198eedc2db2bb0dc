"""Refused connections held open, unread, for a few seconds before they are closed.

A client that ignores ``Retry-After`` and reconnects at once would turn an immediate
close into a flood of connections that queue in front of everyone else's. Held, each of
its connections costs it ``seconds`` of waiting and costs the service one file
descriptor and a shrunken receive buffer; past ``capacity`` held connections, the
newest is closed at once.

>>> import socket
>>> left, right = socket.socketpair()
>>> pit = Tarpit(seconds=0.05)
>>> pit.hold(left)
>>> right.settimeout(5); right.recv(1)  # nothing comes; then the close
b''
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import deque

_RECEIVE_BUFFER = 4096  # bytes the kernel keeps for a held connection's unread body


class Tarpit:
    """Holds up to ``capacity`` sockets for ``seconds`` each, then closes them."""

    def __init__(self, seconds: float = 5.0, capacity: int = 256) -> None:
        self.seconds = seconds
        self.capacity = capacity
        self._held: deque[tuple[float, socket.socket]] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, sock: socket.socket) -> None:
        """Take ``sock``: it is closed after ``seconds`` (at once when the pit is full)."""
        with self._lock:
            if self.seconds <= 0 or len(self._held) >= self.capacity:
                _close(sock)
                return
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _RECEIVE_BUFFER)
            self._held.append((time.monotonic() + self.seconds, sock))
            if self._thread is None or not self._thread.is_alive():
                # started by the first hold: in gunicorn, inside the forked worker
                self._thread = threading.Thread(target=self._close_due, daemon=True)
                self._thread.start()
        self._wake.set()

    def held(self) -> int:
        with self._lock:
            return len(self._held)

    def _close_due(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                while self._held and self._held[0][0] <= now:
                    _close(self._held.popleft()[1])
                wait = self._held[0][0] - now if self._held else None
            self._wake.wait(wait)
            self._wake.clear()


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()

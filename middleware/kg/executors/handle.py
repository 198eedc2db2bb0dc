"""The service's handle on one executor process: its pipe, what it is running, and
how to stop it."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from middleware.errors import MiddlewareError
from middleware.kg.executors.client_watch import closed, watch_close

PAGE = os.sysconf("SC_PAGE_SIZE")


class ExecutorHandle:
    """The service's side of one executor process: its pipe, its state, its stop."""

    def __init__(self, process: BaseProcess, conn: Connection, handles: socket.socket) -> None:
        self.process = process
        self.conn = conn
        self.handles = handles  # where a caller's connection is passed to the executor
        self._readable = select.poll()  # one poll object: Connection.poll builds one a call
        self._readable.register(conn.fileno(), select.POLLIN)
        self.isolation: str | None = None  # what cut it off the network, from its ready
        self.started: float | None = None  # when its current query began
        self.timeout = 0.0  # its current query's timeout
        self.long = False  # its query ran past LONG_AFTER and was given way
        self.stopped_for: MiddlewareError | None = None  # why the watch killed it
        self.tier = 1  # its current caller's tier (queue.py): whose long query to stop
        self.job = 0  # how many jobs it has been given: the watch stops only the one it saw
        self.lock = threading.Lock()  # held while a job starts or ends, and while it is stopped

    def answered(self, timeout: float, caller: socket.socket | None = None) -> str:
        """ "reply" once the executor has written (a reply, or EOF), "timeout" after
        ``timeout`` seconds, "gone" as soon as the ``caller``'s connection closes."""
        deadline = time.monotonic() + timeout
        watched = caller is not None and watch_close(self._readable, caller)
        try:
            while True:
                left = max(0, int((deadline - time.monotonic()) * 1000))
                events = dict(self._readable.poll(left))
                if self.conn.fileno() in events:
                    return "reply"
                if watched and caller is not None and caller.fileno() in events:
                    if closed(caller, events[caller.fileno()]):
                        return "gone"
                    self._readable.unregister(caller)  # data, not a close: stop watching
                    watched = False
                if not events and time.monotonic() >= deadline:
                    return "timeout"
        finally:
            if watched and caller is not None:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self._readable.unregister(caller)

    def rss(self) -> int:
        """Resident bytes, 0 when unknown."""
        try:
            with open(f"/proc/{self.process.pid}/statm", encoding="ascii") as statm:
                return int(statm.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            return 0

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        with contextlib.suppress(OSError):  # closed already by a concurrent replacement
            self.conn.close()
        self.handles.close()

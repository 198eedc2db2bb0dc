"""The development server ``kgmw serve`` runs on loopback: Werkzeug's, with threads that
accept their own connections.

Werkzeug's threaded server starts a thread for every connection, which costs more than
a 1-hop query (about 0.4 ms of a 1 ms request on 2 cores). Here ``spare`` threads each
block in ``accept`` and serve the connection they got; the kernel wakes one of them per
connection, so a request is read, run and answered on one thread with no hand-over.
A thread that takes the last idle place starts another first, so a slow request (an
answer waiting on its LLM, a kept-alive connection) never holds the others up; threads
beyond ``spare`` idle ones end once their connection is done.

A refused address (``AddressGate``) goes to the tarpit as soon as it is accepted,
before its request is read.
"""

from __future__ import annotations

import contextlib
import io
import platform
import socket
import threading
import time
from importlib.metadata import version
from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler
from werkzeug.urls import uri_to_iri

from middleware.server.address_gate import AddressGate
from middleware.server.plain_get import PlainGet, answer_plain_get, peek_plain_get
from middleware.server.tarpit import Tarpit

_CONTROL = str.maketrans({c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)]})


class _Writer(io.BufferedIOBase):
    """A connection's writer that sends the held status line and headers together with
    the first body bytes (one send, so the client wakes once), then writes through."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.held = b""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._sock.sendall(self.held + bytes(data))
        self.held = b""
        return len(data)

    def flush(self) -> None:
        if self.held:
            held, self.held = self.held, b""
            self._sock.sendall(held)

    def fileno(self) -> int:
        return self._sock.fileno()


class _Handler(WSGIRequestHandler):
    """Werkzeug's handler; the headers wait for the body (``_Writer``)."""

    wfile: _Writer
    _headers_buffer: list[bytes]  # http.server's, filled by send_response and send_header

    def setup(self) -> None:
        super().setup()
        self.wfile = _Writer(self.connection)

    def flush_headers(self) -> None:
        self.wfile.held += b"".join(self._headers_buffer)
        self._headers_buffer = []


class LoopbackServer(BaseWSGIServer):
    """Werkzeug's development server, each of its threads accepting its own connections."""

    multithread = True  # HTTP/1.1 (chunked streams), as Werkzeug's threaded server
    daemon_threads = True

    def __init__(
        self,
        host: str,
        port: int,
        app: Any,
        *,
        spare: int = 4,
        gate: AddressGate | None = None,
        pit: Tarpit | None = None,
        plain_gets: bool = True,
    ) -> None:
        super().__init__(host, port, app, handler=_Handler)
        self.plain_gets = plain_gets  # plain /sparql GETs without Werkzeug's handler
        self.name_and_port = (str(self.server_address[0]), int(self.server_address[1]))
        self.software = f"Werkzeug/{version('werkzeug')} Python/{platform.python_version()}"
        self.spare = max(1, spare)
        self.gate = gate
        self.pit = pit or Tarpit(0.0)
        self.threads_started = 0  # accepting threads started so far
        self._idle = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._stopped = threading.Event()

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve until ``shutdown``."""
        self._stopping.clear()
        self._stopped.clear()
        with self._lock:
            for _ in range(self.spare):
                self._start_thread()
        try:
            self._stopping.wait()
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop accepting; connections being served finish on their own threads."""
        self._stopping.set()
        with contextlib.suppress(OSError):  # wakes every thread blocked in accept
            self.socket.shutdown(socket.SHUT_RDWR)
        self._stopped.wait()

    def _start_thread(self) -> None:
        """Another accepting thread (the caller holds ``_lock``)."""
        self._idle += 1
        self.threads_started += 1
        threading.Thread(target=self._accept_loop, daemon=True, name="kgmw-http").start()

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                request, client = self.socket.accept()
            except OSError:
                if self._stopping.is_set():
                    break
                self._stopping.wait(0.05)  # out of file descriptors: let some close
                continue
            with self._lock:
                self._idle -= 1
                if self._idle == 0:
                    self._start_thread()
            held = self._serve(request, client)
            with self._lock:  # idle again before the close the client may be waiting for
                leave = self._idle >= self.spare
                self._idle += 0 if leave else 1
            if not held:
                self.shutdown_request(request)
            if leave:
                return
        with self._lock:
            self._idle -= 1

    def _serve(self, request: socket.socket, client: Any) -> bool:
        """Serve one connection; True when the tarpit holds it instead."""
        if self.gate is not None and self.gate.refused(str(client[0])):
            self.pit.hold(request)
            return True
        try:
            plain = None
            if self.plain_gets:
                plain = peek_plain_get(request, client, self.name_and_port, self.software)
            if plain is None:
                self.finish_request(request, client)
            else:
                self._answer(request, client, plain)
        except Exception:  # logged (handle_error), then the connection is closed
            self.handle_error(request, client)
        return False

    def _answer(self, request: socket.socket, client: Any, plain: PlainGet) -> None:
        """A plain ``GET /sparql`` without Werkzeug's handler, logged as it logs."""
        try:
            answer = answer_plain_get(self.app, request, plain, self.software)
        except OSError:  # the client left: nobody to answer (Werkzeug drops it too)
            return
        line = uri_to_iri(plain.request_line).translate(_CONTROL)
        stamp = time.strftime("%d/%b/%Y %H:%M:%S")
        with contextlib.suppress(OSError):  # pipelined bytes: read, so the close is no reset
            while request.recv(65536, socket.MSG_DONTWAIT):
                pass
        code = answer.status.partition(" ")[0]
        self.log("info", f'{client[0]} - - [{stamp}] "{line}" {code} -')

"""The development server ``kgmw serve`` runs on loopback: Werkzeug's, with threads that
accept their own connections and run the app only on a request that arrived whole.

Werkzeug's threaded server starts a thread for every connection, which costs more than
a 1-hop query (about 0.4 ms of a 1 ms request on 2 cores), and holds it while the
client sends (or sends nothing). Here ``spare`` threads each wait for a connection
(``intake``: the kernel wakes one of them per connection); the request that came with
it is read, run and answered on that thread, with no hand-over. A request not whole
yet goes to the process's ``RequestReader``, which hands it back to an idle thread
once it is whole, or closes it at its deadline (``server_head_timeout``,
``server_body_rate``, ``server_request_timeout``). A thread that takes the last idle
place starts another first, so a slow answer (one waiting on its LLM) never holds the
others up; threads beyond ``spare`` idle ones end once their request is done.

A refused address (``AddressGate``) goes to the tarpit as soon as it is accepted,
before its request is read. One request per connection (``Connection: close``), as
Werkzeug's own handler answers.
"""

from __future__ import annotations

import contextlib
import io
import os
import platform
import socket
import threading
import time
from importlib.metadata import version
from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler
from werkzeug.urls import uri_to_iri

from middleware.server.connections.address_gate import AddressGate
from middleware.server.connections.arrival import Arrival, Limits
from middleware.server.connections.intake import Intake
from middleware.server.connections.tarpit import Tarpit
from middleware.server.proxy.plain_get import PlainGet, answer_plain_get

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
        _send(self._sock, self.held + bytes(data))
        self.held = b""
        return len(data)

    def flush(self) -> None:
        if self.held:
            held, self.held = self.held, b""
            _send(self._sock, held)

    def fileno(self) -> int:
        return self._sock.fileno()


def _send(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except BlockingIOError as err:  # SO_SNDTIMEO: the client read nothing for that long
        raise TimeoutError("the client stopped reading (server_send_timeout)") from err


class _Handler(WSGIRequestHandler):
    """Werkzeug's handler on a request that arrived whole: it reads the request from
    memory, never from the socket; the headers wait for the body (``_Writer``)."""

    wfile: _Writer
    _headers_buffer: list[bytes]  # http.server's, filled by send_response and send_header

    def __init__(self, arrival: Arrival, server: LoopbackServer) -> None:
        self.arrived = arrival.request
        super().__init__(arrival.sock, arrival.address, server)

    def setup(self) -> None:
        self.connection = self.request
        self.rfile = io.BytesIO(self.arrived)
        self.wfile = _Writer(self.connection)

    def flush_headers(self) -> None:
        self.wfile.held += b"".join(self._headers_buffer)
        self._headers_buffer = []


class LoopbackServer(BaseWSGIServer):
    """Werkzeug's development server, each of its threads accepting its own connections
    and serving whole requests only."""

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
        limits: Limits | None = None,
    ) -> None:
        super().__init__(host, port, app, handler=_Handler)
        self.plain_gets = plain_gets  # plain /sparql GETs without Werkzeug's handler
        self.software = f"Werkzeug/{version('werkzeug')} Python/{platform.python_version()}"
        self.spare = max(1, spare)
        self.gate = gate
        self.pit = pit or Tarpit(0.0)
        self.limits = limits or Limits()
        self.threads_started = 0  # serving threads started so far
        self._idle = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._stop = -1  # an eventfd, readable once the threads are to stop
        self._intake: Intake | None = None

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve until ``shutdown``."""
        self._stopping.clear()
        self._stopped.clear()
        self._stop = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._intake = Intake(
            [self.socket],
            self.limits,
            gate=self.gate,
            pit=self.pit,
            software=self.software,
            plain_gets=self.plain_gets,
        )
        with self._lock:
            for _ in range(self.spare):
                self._start_thread(self._intake)
        try:
            self._stopping.wait()
        finally:
            for _ in range(100):  # the idle threads see the stop and end
                with self._lock:
                    if not self._idle:
                        break
                time.sleep(0.01)
            self._intake.close()  # requests being served finish on their threads
            os.close(self._stop)
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop accepting; requests being served finish on their own threads."""
        self._stopping.set()
        with contextlib.suppress(OSError):  # readable for good: every waiting thread ends
            os.eventfd_write(self._stop, 1)
        self._stopped.wait()

    def _start_thread(self, intake: Intake) -> None:
        """Another serving thread (the caller holds ``_lock``)."""
        self._idle += 1
        self.threads_started += 1
        threading.Thread(
            target=self._serve_loop, args=(intake,), daemon=True, name="kgmw-http"
        ).start()

    def _serve_loop(self, intake: Intake) -> None:
        poller = intake.poller(self._stop)
        try:
            while not self._stopping.is_set():
                arrival = intake.next(poller)
                if arrival is None:
                    break
                with self._lock:
                    self._idle -= 1
                    if self._idle == 0:
                        self._start_thread(intake)
                self._serve(intake, arrival)
                with self._lock:  # idle again before the close the client may be waiting for
                    leave = self._idle >= self.spare
                    self._idle += 0 if leave else 1
                intake.finish(arrival)
                if leave:
                    return
            with self._lock:
                self._idle -= 1
        finally:
            poller.close()

    def _serve(self, intake: Intake, arrival: Arrival) -> None:
        """Serve one whole request."""
        try:
            plain = intake.plain(arrival)
            if plain is None:
                _Handler(arrival, self)
            else:
                self._answer(arrival, plain)
        except Exception:  # logged (handle_error), then the connection is closed
            self.handle_error(arrival.sock, arrival.address)

    def _answer(self, arrival: Arrival, plain: PlainGet) -> None:
        """A plain ``GET /sparql`` without Werkzeug's handler, logged as it logs."""
        try:
            answer = answer_plain_get(self.app, arrival.sock, plain, self.software)
        except OSError:  # the client left: nobody to answer (Werkzeug drops it too)
            return
        line = uri_to_iri(plain.request_line).translate(_CONTROL)
        stamp = time.strftime("%d/%b/%Y %H:%M:%S")
        code = answer.status.partition(" ")[0]
        self.log("info", f'{arrival.address[0]} - - [{stamp}] "{line}" {code} -')

"""The gunicorn worker ``kgmw serve`` runs: threads that each accept their own
connections, behind the address gate.

gunicorn's ``gthread`` worker accepts on one thread and hands each connection to a
pool thread (a wake-up on another thread per request, and a busy worker keeps
accepting connections it cannot serve yet). Here each of ``threads`` threads waits
for the listening socket itself (``EPOLLEXCLUSIVE``: the kernel wakes one waiter per
connection, across all workers) and serves the connection it accepted with the sync
worker's request handling: gunicorn's parser and its request-line and header limits,
one request per connection (``Connection: close``), the access log; a plain
``GET /sparql`` is read and answered by ``plain_get`` instead. A worker whose
threads are all busy accepts nothing, so another worker gets the connection. The
main thread sends gunicorn's heartbeat; on a stop the threads finish their requests
(up to ``graceful_timeout``).

``kgmw serve`` makes one ``AddressGate`` in gunicorn's master and hands it to
``use_gate`` before the workers fork, so every worker sees every refusal; the
connection of a refused address goes to the tarpit as soon as it is accepted, before
its request line is read.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
import time
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from gunicorn import SERVER, util
from gunicorn.workers.sync import SyncWorker

from middleware.server.address_gate import AddressGate
from middleware.server.plain_get import PlainGet, answer_plain_get, peek_plain_get
from middleware.server.tarpit import Tarpit

_gate: AddressGate | None = None
_pit = Tarpit(0.0)
_BACK_OFF = 0.1  # seconds a thread waits after accept failed (out of file descriptors)


def use_gate(gate: AddressGate | None, pit: Tarpit) -> None:
    """The gate the workers forked from now on consult (None: none), and where refused
    connections go."""
    global _gate, _pit
    _gate, _pit = gate, pit


def _refused(client: Any) -> bool:
    address = client[0] if isinstance(client, tuple) and client else ""
    return _gate is not None and isinstance(address, str) and _gate.refused(address)


class AcceptingThreadWorker(SyncWorker):  # type: ignore[misc]
    """The sync worker's request handling on ``threads`` threads, each accepting its own
    connections; refused addresses go to the tarpit unread."""

    alive: bool  # gunicorn's: False once the worker is told to stop

    def run(self) -> None:
        for listener in self.sockets:
            listener.setblocking(False)  # a woken thread may find the connection taken
        stop_read, stop_write = os.pipe()
        threads = [
            threading.Thread(target=self._serve, args=(stop_read,), daemon=True, name="kgmw-http")
            for _ in range(max(1, self.cfg.threads))
        ]
        for thread in threads:
            thread.start()
        try:
            while self.alive and self.is_parent_alive():
                self.notify()
                with contextlib.suppress(InterruptedError):  # a signal: look again
                    if select.select([self.PIPE[0]], [], [], 1.0)[0]:
                        with contextlib.suppress(BlockingIOError):
                            os.read(self.PIPE[0], 64)
        finally:
            self.alive = False
            os.write(stop_write, b"!")  # every thread's poll sees it and ends
            deadline = time.monotonic() + self.cfg.graceful_timeout
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))

    def _serve(self, stop: int) -> None:
        """Accept and serve connections until ``stop`` becomes readable."""
        listeners = {listener.fileno(): listener for listener in self.sockets}
        poller = select.epoll()
        for fd in listeners:
            poller.register(fd, select.EPOLLIN | select.EPOLLEXCLUSIVE)
        poller.register(stop, select.EPOLLIN)
        try:
            while self.alive:
                for fd, _ in poller.poll():
                    if fd == stop:
                        return
                    self._accept(listeners[fd])
        finally:
            poller.close()

    def _accept(self, listener: socket.socket) -> None:
        try:
            client, address = listener.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return  # another thread or worker took it
        except OSError as err:  # out of file descriptors or buffers: let some close
            self.log.warning("accept failed: %s", err)
            time.sleep(_BACK_OFF)
            return
        if _refused(address):
            _pit.hold(client)
            return
        client.setblocking(True)
        util.close_on_exec(client)
        server = listener.getsockname()
        plain = peek_plain_get(client, address, (str(server[0]), int(server[1])), SERVER)
        if plain is None:
            self.handle(listener, client, address)
        else:
            self._answer(client, plain)

    def _answer(self, client: socket.socket, plain: PlainGet) -> None:
        """A plain ``GET /sparql`` without gunicorn's parser, in its access log."""
        environ = plain.environ
        environ["gunicorn.socket"] = environ.pop("werkzeug.socket")
        environ["SERVER_SOFTWARE"] = SERVER
        started = datetime.now()
        try:
            answer = answer_plain_get(self.wsgi, client, plain, SERVER)
        except OSError:  # the client left: nobody to answer (gunicorn drops it too)
            return
        finally:
            util.close_graceful(client)
        self.nr += 1
        if self.nr >= self.max_requests:
            self.alive = False  # gunicorn's max_requests: this worker is replaced
        reply = SimpleNamespace(status=answer.status, sent=answer.sent, headers=answer.headers)
        headers = [(k[5:].replace("_", "-"), v) for k, v in environ.items() if k[:5] == "HTTP_"]
        self.log.access(reply, headers, environ, datetime.now() - started)

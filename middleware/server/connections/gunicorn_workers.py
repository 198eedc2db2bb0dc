"""The gunicorn worker ``kgmw serve`` runs: threads that each accept their own
connections, behind the address gate, and run the app only on a request that
arrived whole.

gunicorn's ``gthread`` worker accepts on one thread and hands each connection to a
pool thread (a wake-up on another thread per request, and a busy worker keeps
accepting connections it cannot serve yet); its sync worker reads the request on the
serving thread with no deadline, so a few clients that send nothing hold every
thread. Here each of ``threads`` threads waits for a connection itself (``intake``:
``EPOLLEXCLUSIVE``, the kernel wakes one waiter per connection, across all workers)
and serves the request that came with it with the sync worker's request handling:
gunicorn's parser (over the request's bytes, read already) and its request-line and
header limits, one request per connection (``Connection: close``), the access log; a
plain ``GET /sparql`` is answered by ``plain_get`` instead. A request not whole yet
goes to the worker's ``RequestReader`` and comes back to an idle thread once whole,
or is closed at its deadline. A worker whose threads are all busy accepts nothing,
so another worker gets the connection. The main thread sends gunicorn's heartbeat;
on a stop the threads finish their requests (up to ``graceful_timeout``).

``kgmw serve`` makes one ``AddressGate`` in gunicorn's master and hands it to
``use_gate`` before the workers fork, so every worker sees every refusal; the
connection of a refused address goes to the tarpit as soon as it is accepted, before
its request line is read. ``use_limits`` sets the deadlines (``Limits``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import threading
import time
from datetime import datetime
from types import SimpleNamespace

from gunicorn import SERVER, http
from gunicorn.http.errors import NoMoreData
from gunicorn.workers.sync import SyncWorker

from middleware.server.connections.address_gate import AddressGate
from middleware.server.connections.arrival import Arrival, Limits
from middleware.server.connections.intake import Intake
from middleware.server.connections.tarpit import Tarpit
from middleware.server.proxy.plain_get import PlainGet, answer_plain_get

_gate: AddressGate | None = None
_pit = Tarpit(0.0)
_limits = Limits()
_GONE = (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN, errno.EAGAIN)  # a client left or stalled


def use_gate(gate: AddressGate | None, pit: Tarpit) -> None:
    """The gate the workers forked from now on consult (None: none), and where refused
    connections go."""
    global _gate, _pit
    _gate, _pit = gate, pit


def use_limits(limits: Limits) -> None:
    """The deadlines and body cap of the workers forked from now on."""
    global _limits
    _limits = limits


class AcceptingThreadWorker(SyncWorker):  # type: ignore[misc]
    """The sync worker's request handling on ``threads`` threads, each accepting its own
    connections and serving whole requests only; refused addresses go to the tarpit
    unread."""

    alive: bool  # gunicorn's: False once the worker is told to stop

    def run(self) -> None:
        intake = Intake(
            list(self.sockets),
            _limits,
            gate=_gate,
            pit=_pit,
            software=SERVER,
            on_accept_error=lambda err: self.log.warning("accept failed: %s", err),
        )
        stop_read, stop_write = os.pipe()
        threads = [
            threading.Thread(target=self._serve, args=(intake, stop_read), daemon=True)
            for _ in range(max(1, self.cfg.threads))
        ]
        for thread in threads:
            thread.name = "kgmw-http"
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
            intake.close()

    def _serve(self, intake: Intake, stop: int) -> None:
        """Serve whole requests until ``stop`` becomes readable."""
        poller = intake.poller(stop)
        try:
            while self.alive:
                arrival = intake.next(poller)
                if arrival is None:
                    return
                try:
                    plain = intake.plain(arrival)
                    if plain is None:
                        self._handle(arrival)
                    else:
                        self._answer(arrival, plain)
                finally:
                    intake.finish(arrival)
        finally:
            poller.close()

    def _handle(self, arrival: Arrival) -> None:
        """The sync worker's handling of one request, parsed from the bytes that came
        (nothing more is read from the socket)."""
        client, address, request = arrival.sock, arrival.address, None
        try:
            parser = http.get_parser(self.cfg, [arrival.request], address)
            request = next(parser)
            self.handle_request(arrival.listener, request, client, address)
        except (NoMoreData, StopIteration) as err:
            self.log.debug("Closing connection: %s", err)
        except OSError as err:
            if err.errno not in _GONE:
                self.log.exception("Socket error processing request.")
        except BaseException as err:
            self.handle_error(request, client, address, err)

    def _answer(self, arrival: Arrival, plain: PlainGet) -> None:
        """A plain ``GET /sparql`` without gunicorn's parser, in its access log."""
        environ = plain.environ
        environ["gunicorn.socket"] = environ.pop("werkzeug.socket")
        environ["SERVER_SOFTWARE"] = SERVER
        started = datetime.now()
        try:
            answer = answer_plain_get(self.wsgi, arrival.sock, plain, SERVER)
        except OSError:  # the client left: nobody to answer (gunicorn drops it too)
            return
        self.nr += 1
        if self.nr >= self.max_requests:
            self.alive = False  # gunicorn's max_requests: this worker is replaced
        reply = SimpleNamespace(status=answer.status, sent=answer.sent, headers=answer.headers)
        headers = [(k[5:].replace("_", "-"), v) for k, v in environ.items() if k[:5] == "HTTP_"]
        self.log.access(reply, headers, environ, datetime.now() - started)

"""The development server: threads that accept their own connections, grown on demand."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from middleware.server.connections.address_gate import AddressGate
from middleware.server.connections.loopback_server import LoopbackServer, _Writer
from middleware.server.connections.tarpit import Tarpit
from tests.waiting import PATIENCE, until


def _hello(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    body = environ["REMOTE_ADDR"].encode()
    start_response("200 OK", [("Content-Length", str(len(body)))])
    return [body]


@contextmanager
def _running(server: LoopbackServer) -> Iterator[LoopbackServer]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(10)
        server.server_close()
    assert not thread.is_alive()


def _get(port: int, source: str = "127.0.0.1", path: str = "/") -> bytes:
    with socket.create_connection(("127.0.0.1", port), 5, (source, 0)) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        chunks = []
        while chunk := sock.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks)


def test_connections_are_served_by_threads_started_before_them() -> None:
    with _running(LoopbackServer("127.0.0.1", 0, _hello, spare=2)) as server:
        for _ in range(30):
            assert _get(server.server_port).endswith(b"127.0.0.1")
        assert server.threads_started == 2  # none per connection


def test_a_connection_still_sending_holds_no_thread() -> None:
    with _running(LoopbackServer("127.0.0.1", 0, _hello, spare=1)) as server:
        silent = [socket.create_connection(("127.0.0.1", server.server_port)) for _ in range(4)]
        try:
            for sock in silent:  # the reader waits for each request line, not a thread
                sock.sendall(b"GET / HT")
            assert _get(server.server_port).endswith(b"127.0.0.1")
            assert server.threads_started <= 2  # the one serving started one more, no other
        finally:
            for sock in silent:
                sock.close()


def test_a_slow_answer_holds_its_thread_only() -> None:
    """A thread that takes the last idle place starts another first."""
    entered, release = threading.Event(), threading.Event()

    def slow(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if environ["PATH_INFO"] == "/slow":
            entered.set()
            release.wait(PATIENCE)
        return _hello(environ, start_response)

    with _running(LoopbackServer("127.0.0.1", 0, slow, spare=1)) as server:
        port = server.server_port
        waiting = threading.Thread(target=_get, args=(port, "127.0.0.1", "/slow"))
        waiting.start()
        try:
            assert entered.wait(PATIENCE)
            assert _get(port).endswith(b"127.0.0.1")
            assert server.threads_started >= 2
        finally:
            release.set()
            waiting.join(10)


def test_a_refused_address_is_held_unread_before_any_thread_reads_it() -> None:
    gate = AddressGate()
    gate.refuse("127.0.0.7", 60)
    pit = Tarpit(60)
    with _running(LoopbackServer("127.0.0.1", 0, _hello, gate=gate, pit=pit)) as server:
        with socket.create_connection(("127.0.0.1", server.server_port), 5, ("127.0.0.7", 0)):
            assert until(lambda: pit.held() == 1)
        assert _get(server.server_port).endswith(b"127.0.0.1")  # others are served


def test_the_headers_go_out_with_the_first_body_bytes() -> None:
    sent: list[bytes] = []

    class Recorder:
        def sendall(self, data: bytes) -> None:
            sent.append(data)

    writer = _Writer(Recorder())  # type: ignore[arg-type]
    writer.held = b"HTTP/1.1 200 OK\r\n\r\n"
    writer.write(b"body")
    writer.write(b"more")
    writer.flush()
    assert sent == [b"HTTP/1.1 200 OK\r\n\r\nbody", b"more"]

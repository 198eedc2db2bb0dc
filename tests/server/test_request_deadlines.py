"""Every connection has deadlines: idle and slow sockets never hold a serving thread.

A request is served only once it has arrived whole (head and body); until then its
connection is watched by one non-blocking reader per process, and closed when its
head, its body rate or the whole request misses its deadline. On the development
server and under gunicorn alike.
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from flask import Flask

import middleware.server.connections.intake as intake_module
from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from middleware.server.connections.arrival import Limits
from middleware.server.connections.loopback_server import LoopbackServer
from middleware.server.context import STATE_KEY
from tests.server.conftest import settings
from tests.server.test_cli_serve import _at_once, environment, start  # noqa: F401 (fixture)

# A head deadline of 0.5 s, and a whole-request deadline far past it (30 s), so that a
# connection closed within 10 s was closed by the head deadline or the body rate.
QUICK = Limits(head_seconds=0.5, body_rate=1000, request_seconds=30.0, max_body=8 << 20)
# Seconds a test waits for the server to close a socket: far past every deadline here,
# it only stops a test whose server never closes.
PATIENCE = 30.0
KEY = {"Authorization": "Bearer serve-test-key"}
ASK = {"query": "ASK { ?s ?p ?o }"}


def _echo(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    """The body's length and SHA-256."""
    body = environ["wsgi.input"].read()
    reply = f"{len(body)} {hashlib.sha256(body).hexdigest()}".encode()
    start_response("200 OK", [("Content-Length", str(len(reply)))])
    return [reply]


@contextmanager
def _serving(app: Any, limits: Limits = QUICK) -> Iterator[LoopbackServer]:
    server = LoopbackServer("127.0.0.1", 0, app, spare=2, limits=limits)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(10)
        server.server_close()


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), 10)


def _reply(sock: socket.socket, seconds: float = PATIENCE) -> bytes:
    """Everything ``sock`` receives until the server closes it."""
    sock.settimeout(seconds)
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _post(port: int, body: bytes, pieces: int = 1, pause: float = 0.0) -> bytes:
    head = f"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    whole = head + body
    step = -(-len(whole) // pieces)
    with _connect(port) as sock:
        for at in range(0, len(whole), step):
            sock.sendall(whole[at : at + step])
            time.sleep(pause)
        return _reply(sock)


def _abusers(stack: ExitStack, port: int, each: int) -> list[socket.socket]:
    """``each`` idle sockets, ``each`` half-sent heads and ``each`` bodies that stall."""
    opened = []
    for kind in range(3):
        for _ in range(each):
            sock = stack.enter_context(_connect(port))
            if kind == 1:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nAcc")
            elif kind == 2:
                sock.sendall(b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Length: 9000\r\n\r\nq")
            opened.append(sock)
    return opened


def _still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def _closed_after(sock: socket.socket, seconds: float = PATIENCE) -> tuple[float, bytes]:
    """How long until the server closed ``sock``, and what it said."""
    began = time.monotonic()
    reply = _reply(sock, seconds)
    return time.monotonic() - began, reply


@pytest.fixture
def app(sample_graph: LocalStore) -> Iterator[Flask]:
    service = create_app(settings(), llm=None, graphs={"sample": sample_graph})
    yield service
    service.config[STATE_KEY].close()


def test_idle_and_slow_sockets_hold_no_thread_of_the_development_server(app: Flask) -> None:
    with _serving(app, Limits()) as server, ExitStack() as stack:
        port = server.server_port
        abusers = _abusers(stack, port, 64)
        url = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{url}/healthz", timeout=PATIENCE).status_code == 200
        assert httpx.get(f"{url}/sparql", params=ASK, timeout=PATIENCE).json()["boolean"] is True
        assert all(_still_open(sock) for sock in abusers)  # held, by no thread
        assert server.threads_started <= 4  # none per waiting connection


def test_an_idle_socket_is_closed_at_the_head_deadline() -> None:
    with _serving(_echo) as server, _connect(server.server_port) as idle:
        seconds, reply = _closed_after(idle)
        assert reply == b""  # nothing came: closed without a word
        assert 0.4 <= seconds < 10  # at the 0.5 s deadline; 10 s is 20 times it


def test_a_half_sent_head_gets_408_at_its_deadline() -> None:
    with _serving(_echo) as server, _connect(server.server_port) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\n")
        seconds, reply = _closed_after(sock)
        assert reply.startswith(b"HTTP/1.1 408 ") and b"server_head_timeout" in reply
        assert 0.4 <= seconds < 10  # at the 0.5 s deadline; 10 s is 20 times it


def test_a_body_below_the_least_rate_is_closed() -> None:
    with _serving(_echo) as server, _connect(server.server_port) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        stop = threading.Event()

        def trickle() -> None:  # 100 bytes a second against a least rate of 1000
            while not stop.wait(0.1):
                try:
                    sock.sendall(b"x" * 10)
                except OSError:
                    return

        dripping = threading.Thread(target=trickle, daemon=True)
        dripping.start()
        try:
            seconds, reply = _closed_after(sock)
        finally:
            stop.set()
            dripping.join(5)
        assert reply.startswith(b"HTTP/1.1 408 ") and b"server_body_rate" in reply
        assert seconds < 10  # due after about 0.6 s (0.5 s and 1 s per 1000 bytes that came)


def test_a_request_sent_in_pieces_is_served_whole() -> None:
    body = os.urandom(3000)
    with _serving(_echo) as server:
        reply = _post(server.server_port, body, pieces=6, pause=0.02)
    assert reply.endswith(f"3000 {hashlib.sha256(body).hexdigest()}".encode())


def test_a_body_larger_than_the_receive_buffer_arrives_whole() -> None:
    body = os.urandom(4 << 20)
    with _serving(_echo) as server:
        reply = _post(server.server_port, body)
    assert reply.endswith(f"{4 << 20} {hashlib.sha256(body).hexdigest()}".encode())


def test_a_chunked_body_arrives_whole_and_one_past_the_cap_gets_413() -> None:
    chunks = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    head = b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    with _serving(_echo, Limits(head_seconds=0.5, max_body=2048)) as server:
        with _connect(server.server_port) as sock:
            for at in range(0, len(chunks), 7):  # in pieces, cut anywhere
                sock.sendall((head if at == 0 else b"") + chunks[at : at + 7])
            assert _reply(sock).endswith(
                f"11 {hashlib.sha256(b'hello world').hexdigest()}".encode()
            )
        with _connect(server.server_port) as sock:
            sock.sendall(head + b"1000\r\n" + b"x" * 100)  # declares 4096 bytes: over 2048
            reply = _reply(sock)
    assert reply.startswith(b"HTTP/1.1 413 ") and b"server_max_body" in reply


def test_a_head_past_its_size_limit_gets_431() -> None:
    with _serving(_echo) as server, _connect(server.server_port) as sock:
        sock.sendall(b"GET /echo HTTP/1.1\r\n" + b"X-Pad: " + b"x" * 70000)
        assert _reply(sock).startswith(b"HTTP/1.1 431 ")


def test_plain_gets_still_take_the_fast_path(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[str] = []
    lean: Callable[..., Any] = intake_module.parse_plain_get

    def spy(*args: Any, **kwargs: Any) -> Any:
        found = lean(*args, **kwargs)
        taken.append("lean" if found is not None else "full")
        return found

    monkeypatch.setattr(intake_module, "parse_plain_get", spy)
    with _serving(app, Limits()) as server:
        url = f"http://127.0.0.1:{server.server_port}"
        assert httpx.get(f"{url}/sparql", params=ASK, timeout=PATIENCE).json()["boolean"] is True
        assert httpx.post(f"{url}/sparql", data=ASK, timeout=PATIENCE).json()["boolean"] is True
    assert taken == ["lean", "full"]


@pytest.mark.slow
def test_idle_and_slow_sockets_hold_no_gunicorn_thread(
    environment: dict[str, str],  # noqa: F811
) -> None:
    """2 workers of 4 threads: 64 idle sockets, 64 half heads and 64 stalled bodies
    leave /healthz and /sparql answering; then, at the deadlines set low, each is
    closed; a 4 MB body (under a raised server_max_body) still arrives whole.

    The answers must come before the 4 s deadlines close any socket (which would free
    threads): they take tens of milliseconds once a worker has started its query
    executors, but a worker's first query opens the store and starts them (2 s and more
    on a busy machine), so queries sent 32 at once, before the clock starts, have both
    workers do that first."""
    environment.update(
        KGMW_SERVER_HEAD_TIMEOUT="4",
        KGMW_SERVER_MAX_BODY=str(8 << 20),
        KGMW_SPARQL_MAX_QUERY_CHARS=str(8 << 20),
    )
    with start(["--workers", "2"], environment) as (url, process), ExitStack() as stack:
        port = int(url.rsplit(":", 1)[1])
        warm = b"GET /sparql?" + urlencode(ASK).encode() + b" HTTP/1.1\r\nHost: x\r\n"
        assert _at_once(port, warm, KEY, 32) + _at_once(port, warm, KEY, 32) == 64
        abusers = _abusers(stack, port, 64)
        began = time.monotonic()
        assert httpx.get(f"{url}/healthz", timeout=PATIENCE).status_code == 200
        plain = httpx.get(f"{url}/sparql", params=ASK, headers=KEY, timeout=PATIENCE)
        assert plain.json() == {"head": {}, "boolean": True}
        # before the 4 s deadlines; 3.5 s is 30 times what the two answers take
        assert time.monotonic() - began < 3.5
        assert all(_still_open(sock) for sock in abusers[-64:])
        for sock in (abusers[0], abusers[64], abusers[128]):  # deadlines of 4 s
            assert _closed_after(sock, 60)[0] < 60
        padded = "#" + "x" * (4 << 20) + "\nASK { ?s ?p ?o }"  # cut short, it is only a comment
        posted = httpx.post(
            f"{url}/sparql",
            content=padded.encode(),
            headers={**KEY, "Content-Type": "application/sparql-query"},
            timeout=30,
        )
        assert posted.status_code == 200 and posted.json()["boolean"] is True
        os.killpg(process.pid, signal.SIGTERM)
        out, _ = process.communicate(timeout=30)
    assert b'"GET /sparql?' + urlencode(ASK).encode() in out  # the access log


def test_a_client_that_expects_100_continue_gets_it_before_sending_its_body() -> None:
    head = b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
    with _serving(_echo) as server, _connect(server.server_port) as sock:
        sock.sendall(head)
        sock.settimeout(5)
        assert sock.recv(65536).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(b"hello")
        reply = _reply(sock)
    assert reply.endswith(f"5 {hashlib.sha256(b'hello').hexdigest()}".encode())

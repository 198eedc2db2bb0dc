"""Clients that read their answers slowly, or not at all, hold no serving thread: the
rest of a response is sent by one thread per process, within a budget of memory."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from urllib.parse import urlencode

import httpx
import pytest

from middleware.server.connections.response_sender import OutboxSocket, ResponseSender, SendBudget
from tests.server.test_cli_serve import environment, start  # noqa: F401 (fixture)
from tests.waiting import PATIENCE, until

KEY = {"Authorization": "Bearer serve-test-key"}
ASK = {"query": "ASK { ?s ?p ?o }"}


def big_answer(times: int = 15) -> str:
    """One row whose one value is 100 characters doubled ``times`` times (3.2 MB)."""
    binds = " ".join(f"BIND(CONCAT(?v{n}, ?v{n}) AS ?v{n + 1})" for n in range(times))
    return f'SELECT ?v{times} WHERE {{ BIND("{"x" * 100}" AS ?v0) {binds} }}'


def not_reading(port: int, query: str) -> socket.socket:
    """A connection that asks for ``query``'s answer and never reads it."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    target = f"/sparql?{urlencode({'query': query})}"
    head = f"GET {target} HTTP/1.1\r\nHost: x\r\nAuthorization: {KEY['Authorization']}\r\n\r\n"
    sock.sendall(head.encode())
    return sock


def answer_came(sock: socket.socket) -> bool:
    """Whether the start of an answer waits, unread, on ``sock``."""
    return bool(select.select([sock], [], [], 0)[0])


@contextmanager
def held(stack: ExitStack, port: int, count: int) -> Iterator[list[socket.socket]]:
    socks = [stack.enter_context(not_reading(port, big_answer())) for _ in range(count)]
    # their answers are written, and stuck (a fixed 2 s was not always enough: on a busy
    # machine the executors were still starting, and no answer had come)
    assert until(lambda: all(answer_came(sock) for sock in socks))
    yield socks


def test_slow_readers_of_large_answers_hold_no_gunicorn_thread(
    environment: dict[str, str],  # noqa: F811
) -> None:
    """2 workers of 4 threads and 16 clients that never read a 3.2 MB answer: /healthz
    and a small query still answer (before, 8 such clients stopped every route)."""
    with start(["--workers", "2"], environment) as (url, _), ExitStack() as stack:
        port = int(url.rsplit(":", 1)[1])
        with held(stack, port, 16):
            began = time.monotonic()
            assert httpx.get(f"{url}/healthz", timeout=PATIENCE).status_code == 200
            answered = httpx.get(f"{url}/sparql", params=ASK, headers=KEY, timeout=PATIENCE)
            assert answered.json() == {"head": {}, "boolean": True}
            assert time.monotonic() - began < 5  # generous: it takes milliseconds


def test_a_reader_gets_its_whole_answer_from_the_sender(
    environment: dict[str, str],  # noqa: F811
) -> None:
    """A client that starts reading late still gets every byte."""
    with start([], environment) as (url, _):
        port = int(url.rsplit(":", 1)[1])
        with not_reading(port, big_answer()) as sock:
            time.sleep(1.0)
            sock.settimeout(30)
            chunks = []
            while chunk := sock.recv(1 << 16):
                chunks.append(chunk)
        head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
        assert b" 200 " in head.split(b"\r\n")[0]
        assert len(body) > 100 << 15 and body.rstrip().endswith(b"}")


def test_past_the_budget_a_slow_readers_answer_is_refused() -> None:
    """A 1 MB budget: a 3 MB response to a client that does not read is not kept (the
    write fails, and the connection is closed); a second client's small one is."""
    budget = SendBudget(1 << 20)
    ours, theirs = socket.socketpair()
    outbox = OutboxSocket.taking(ours, budget)
    try:
        with pytest.raises(BrokenPipeError, match="server_send_buffer_mb"):
            outbox.sendall(b"x" * (3 << 20))
        assert outbox.broken and budget.refused == 1 and budget.held == 0
        other, reader = socket.socketpair()
        small = OutboxSocket.taking(other, budget)
        small.sendall(b"z" * (512 << 10))  # within the budget: kept as needed
        assert budget.held == len(small.pending)
        small.drop()
        assert budget.held == 0
        small.close()
        reader.close()
    finally:
        outbox.close()
        theirs.close()


def test_the_sender_finishes_and_says_so() -> None:
    budget = SendBudget(8 << 20)
    sender = ResponseSender(seconds=30)
    ours, theirs = socket.socketpair()
    outbox = OutboxSocket.taking(ours, budget)
    outbox.sendall(b"y" * (2 << 20))
    kept = len(outbox.pending)
    endings: list[bool] = []
    assert kept and budget.held == kept and sender.hand(outbox, endings.append)
    theirs.settimeout(10)
    got = 0
    while got < 2 << 20:
        got += len(theirs.recv(1 << 16))
    assert until(lambda: endings)
    assert endings == [True] and budget.held == 0
    outbox.close()
    theirs.close()
    sender.close()

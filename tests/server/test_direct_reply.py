"""A plain /sparql GET is answered by its query executor straight onto the connection;
what the executor's one non-blocking write leaves is sent by the service."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from flask import Flask

from middleware.errors import BadRequest
from middleware.kg.backends.local import LocalStore
from middleware.kg.executors.delivery import Delivery, response, send_once
from middleware.kg.executors.pool import QueryPool, Sent
from middleware.server import create_app
from middleware.server.context import STATE_KEY
from middleware.server.proxy.direct_reply import DirectReply
from tests.executor_helpers import pool_over, run_written
from tests.server.conftest import LiveServer, settings

HEAD = DirectReply("test").head("application/sparql-results+json", [("X-Kgmw-Source", "s")])
CUT = b"X-Kgmw-Truncated: cut\r\n"


@pytest.fixture(scope="module")
def pool(sample_graph: LocalStore) -> Iterator[QueryPool]:
    assert sample_graph.path is not None
    running = pool_over(sample_graph.path, workers=1)
    yield running
    running.close()


def deliver(pool: QueryPool, query: str, sock: socket.socket, *, max_rows: int) -> Any:
    """``query`` run with ``sock`` offered for the executor's answer."""
    return run_written(pool, query, max_rows=max_rows, delivery=Delivery(sock, HEAD, CUT))


def settled(ran: list[Any], count: int) -> None:
    deadline = time.monotonic() + 10
    while len(ran) < count and time.monotonic() < deadline:
        time.sleep(0.01)


def read_all(sock: socket.socket) -> bytes:
    sock.settimeout(10)
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def parse(raw: bytes) -> tuple[list[bytes], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return head.split(b"\r\n"), body


def test_the_executor_sends_the_whole_response_on_the_callers_connection(
    pool: QueryPool,
) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        ran = deliver(pool, "SELECT ?o WHERE { ?s ?p ?o } LIMIT 2", theirs, max_rows=100)
        assert isinstance(ran, Sent) and ran.unsent == b"" and not ran.truncated
        theirs.shutdown(socket.SHUT_WR)  # the service's close, after the executor's write
        lines, body = parse(read_all(ours))
    assert lines[0] == b"HTTP/1.1 200 OK"
    assert f"Content-Length: {ran.size}".encode() in lines and len(body) == ran.size
    assert b"X-Kgmw-Source: s" in lines and CUT.strip() not in lines
    assert len(json.loads(body)["results"]["bindings"]) == 2


def test_a_cut_result_carries_the_cut_header(pool: QueryPool) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        ran = deliver(pool, "SELECT ?o WHERE { ?s ?p ?o }", theirs, max_rows=3)
        theirs.shutdown(socket.SHUT_WR)
        lines, body = parse(read_all(ours))
    assert isinstance(ran, Sent) and ran.truncated
    assert CUT.strip() in lines and len(json.loads(body)["results"]["bindings"]) == 3


def test_what_the_write_leaves_comes_back_to_the_service(pool: QueryPool) -> None:
    """A small send buffer nobody reads: the executor never blocks on the client."""
    ours, theirs = socket.socketpair()
    theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    with ours, theirs:
        ran = deliver(pool, "SELECT ?s ?p ?o WHERE { ?s ?p ?o }", theirs, max_rows=10_000)
        assert isinstance(ran, Sent) and ran.unsent  # left for the service
        sent = []

        def finish() -> None:
            theirs.sendall(ran.unsent)
            theirs.shutdown(socket.SHUT_WR)

        writer = threading.Thread(target=finish)
        writer.start()
        sent.append(read_all(ours))
        writer.join()
    _, body = parse(sent[0])
    assert len(body) == ran.size and json.loads(body)["results"]["bindings"]


def test_an_error_is_not_written_by_the_executor(pool: QueryPool) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        with pytest.raises(BadRequest, match="not a valid SPARQL query"):
            deliver(pool, "SELECT ?o WHERE {", theirs, max_rows=10)
        ours.setblocking(False)
        with pytest.raises(BlockingIOError):
            ours.recv(1)  # nothing was sent: the service renders the error
        # the executor took the connection with the job: the next job is unaffected
        ran = run_written(pool, "ASK {}")
        assert not isinstance(ran, Sent) and json.loads(ran.body)["boolean"] is True


def test_a_gone_client_leaves_everything_to_the_service() -> None:
    ours, theirs = socket.socketpair()
    ours.close()
    with theirs:
        assert send_once(theirs, b"data") == b"data"


def test_response_is_head_length_extra_and_body() -> None:
    raw = response(b"HTTP/1.1 200 OK\r\n", b"abc", CUT)
    expected = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n" + CUT + b"Connection: close\r\n\r\nabc"
    assert raw == expected


def test_the_service_answers_plain_gets_through_the_executor(
    serve: Callable[[Flask], LiveServer],
    sample_graph: LocalStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = serve(create_app(settings(sparql_max_rows=3), graphs={"sample": sample_graph}))
    pool = server.app.config[STATE_KEY].query_pool()
    assert pool is not None
    ran: list[Any] = []
    run = pool.run

    def spy(*args: Any, **kwargs: Any) -> Any:
        ran.append(run(*args, **kwargs))
        return ran[-1]

    monkeypatch.setattr(pool, "run", spy)
    query = {"query": "SELECT ?o WHERE { ?s ?p ?o }"}
    got = httpx.get(f"{server.url}/sparql", params=query, timeout=60)
    settled(ran, 1)  # the client may have its answer before the service heard back
    assert [isinstance(r, Sent) for r in ran] == [True]
    assert got.status_code == 200
    assert got.headers["content-type"] == "application/sparql-results+json; charset=utf-8"
    assert got.headers["x-kgmw-truncated"] == "cut at 3 rows"
    assert got.headers["x-kgmw-source"] == "sample"
    assert len(got.json()["results"]["bindings"]) == 3
    posted = httpx.post(f"{server.url}/sparql", data=query, timeout=60)  # the Flask route
    settled(ran, 2)
    assert posted.json() == got.json() and not isinstance(ran[-1], Sent)
    bad = httpx.get(f"{server.url}/sparql", params={"query": "SELECT ?o {"}, timeout=60)
    assert bad.status_code == 400 and "not a valid SPARQL query" in bad.json()["message"]


def test_a_caller_that_leaves_once_it_has_its_answer_is_booked_as_answered(
    pool: QueryPool,
) -> None:
    """The executor answers the client first: the client may read and close before
    the service hears back. That is an answered query, not a caller gone."""
    for _ in range(20):
        ours, theirs = socket.socketpair()

        def read_and_leave(sock: socket.socket = ours) -> None:
            sock.settimeout(10)
            sock.recv(65536)
            sock.close()

        reader = threading.Thread(target=read_and_leave)
        reader.start()
        with theirs:
            ran = run_written(
                pool,
                "ASK {}",
                client="addr:10.1.1.1",
                caller=theirs,
                delivery=Delivery(theirs, HEAD, CUT),
            )
        reader.join()
        assert isinstance(ran, Sent)
    assert pool.record.tier("addr:10.1.1.1") == 0

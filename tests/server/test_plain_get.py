"""The lean path for a plain GET /sparql: what it takes, what it leaves to the full
handler, and that both answer alike."""

from __future__ import annotations

import logging
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlencode

import pytest
from flask import Flask

from middleware.kg.backends.local import LocalStore
from middleware.server import create_app
from middleware.server.connections.loopback_server import LoopbackServer
from middleware.server.context import STATE_KEY
from middleware.server.proxy.plain_get import parse_plain_get
from tests.server.conftest import settings

QUERY = "SELECT ?p ?o WHERE { <https://kgmw.dev/metaqa/entity/Titanic> ?p ?o }"
TARGET = "/sparql?" + urlencode({"query": QUERY})
PLAIN = f"GET {TARGET} HTTP/1.1\r\nHost: h:1\r\nAccept: application/sparql-results+json\r\n\r\n"


def _parse(raw: bytes) -> object:
    """What ``parse_plain_get`` makes of the request ``raw``."""
    left, right = socket.socketpair()
    with left, right:
        return parse_plain_get(raw, left, ("127.0.0.9", 4321), ("127.0.0.1", 80), "test")


def test_a_plain_get_is_read_into_the_environ_the_full_handler_makes() -> None:
    plain = _parse(PLAIN.encode())
    assert plain is not None
    environ = plain.environ  # type: ignore[attr-defined]
    assert environ["REQUEST_METHOD"] == "GET" and environ["PATH_INFO"] == "/sparql"
    assert environ["QUERY_STRING"] == TARGET.partition("?")[2]
    assert environ["HTTP_HOST"] == "h:1" and environ["REMOTE_ADDR"] == "127.0.0.9"
    assert environ["HTTP_ACCEPT"] == "application/sparql-results+json"


@pytest.mark.parametrize(
    "raw",
    [
        PLAIN[: len(PLAIN) // 2],  # still arriving
        PLAIN.replace("GET", "POST", 1),
        PLAIN.replace("HTTP/1.1", "HTTP/2.0", 1),
        PLAIN.replace("/sparql?", "/sparql/?", 1),
        PLAIN.replace("Host: h:1", "Host: h:1\r\n folded"),
        PLAIN.replace("Host: h:1", "X_Forwarded: a"),
        PLAIN.replace("Host: h:1", "Bad Name: a"),
        PLAIN.replace("Host: h:1", "Host: h\x01"),
        PLAIN.replace("Host: h:1", "Content-Length: 4"),
        PLAIN.replace("Host: h:1", "Transfer-Encoding: chunked"),
        PLAIN.replace("Host: h:1", "Expect: 100-continue"),
        PLAIN.replace("Host: h:1", "X-Forwarded-Proto: https"),  # the scheme: the server's
        PLAIN.replace("Host: h:1", "Origin: https://example.org"),  # CORS: the app's
        PLAIN.replace(TARGET, TARGET + "&update=x", 1),
        PLAIN.replace(TARGET, TARGET + "#frag", 1),
        PLAIN.replace("Host: h:1", "Host: h\xe9"),
        "GET " + "/sparql?query=" + "x" * 9000 + " HTTP/1.1\r\n\r\n",  # past the head limit
    ],
)
def test_anything_else_is_left_for_the_full_handler(raw: str) -> None:
    assert _parse(raw.encode("latin-1")) is None


@pytest.fixture
def app(sample_graph: LocalStore) -> Iterator[Flask]:
    service = create_app(settings(), llm=None, graphs={"sample": sample_graph})
    yield service
    service.config[STATE_KEY].close()


@contextmanager
def _serving(app: Flask, plain_gets: bool) -> Iterator[int]:
    server = LoopbackServer("127.0.0.1", 0, app, plain_gets=plain_gets)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        thread.join(10)
        server.server_close()


def _exchange(port: int, raw: str) -> tuple[str, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), 10) as sock:
        sock.sendall(raw.encode())
        reply = b"".join(iter(lambda: sock.recv(65536), b""))
    head, _, body = reply.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return status, headers, body


@pytest.mark.parametrize("query", [QUERY, "SELECT ?x WHERE { ?x ?p"], ids=["answer", "error"])
def test_the_lean_path_answers_and_logs_as_werkzeugs_handler_does(
    app: Flask, query: str, caplog: pytest.LogCaptureFixture
) -> None:
    raw = PLAIN.replace(TARGET, "/sparql?" + urlencode({"query": query}), 1)
    replies = []
    for lean in (True, False):
        with caplog.at_level(logging.INFO, "werkzeug"), _serving(app, lean) as port:
            replies.append(_exchange(port, raw))
    (lean_status, lean_headers, lean_body), (full_status, full_headers, full_body) = replies
    assert lean_status == full_status and lean_body == full_body
    for name in ("Server", "Content-Type", "Content-Length", "Connection"):
        assert lean_headers[name] == full_headers[name]
    logged = [
        re.sub(r"\x1b\[[0-9;]*m", "", r.getMessage()).split("] ", 1)[1]  # colours aside
        for r in caplog.records
        if "GET /sparql" in r.getMessage()
    ]
    assert len(logged) == 2 and logged[0] == logged[1]


def test_a_pipelined_second_request_does_not_cut_the_first_answer(app: Flask) -> None:
    with _serving(app, True) as port:
        status, headers, body = _exchange(port, PLAIN + PLAIN)
    assert status == "HTTP/1.1 200 OK" and headers["Connection"] == "close"
    assert len(body) == int(headers["Content-Length"])

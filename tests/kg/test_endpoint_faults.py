"""SparqlEndpoint against a local server that misbehaves on purpose: every fault ends, bounded."""

from __future__ import annotations

import http.server
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import suppress
from typing import ClassVar

import pytest

from middleware.errors import BadRequest, EndpointError, EndpointTimeout, ReadOnlyViolation
from middleware.kg.backends.endpoint import SparqlEndpoint

GOOD = b'{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"uri","value":"http://e.org/a"}}]}}'
QUERY = "SELECT ?x WHERE { ?x ?p ?o } LIMIT 1"
# A hang and a trickle last 20 s, against a 1 s timeout: a query that gives up within
# BOUND (10 times its timeout, for a busy machine) kept the timeout, not the fault.
HANG = 20.0
BOUND = 10.0


class Faulty(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[Counter[str]] = Counter()

    def log_message(self, *args: object) -> None:
        pass

    def reply(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        with suppress(BrokenPipeError):  # the client gave up first, as timeout tests intend
            self.wfile.write(body)

    def do_GET(self) -> None:
        mode = self.path.split("?")[0].strip("/")
        Faulty.hits[mode] += 1
        count = Faulty.hits[mode]
        json_type = "application/sparql-results+json"
        if mode == "ok":
            self.reply(200, GOOD, json_type)
        elif mode == "429-then-ok":
            if count == 1:
                self.reply(429, b"slow down", "text/plain", Retry_After="1")
            else:
                self.reply(200, GOOD, json_type)
        elif mode == "429":
            self.reply(429, b"slow down", "text/plain", Retry_After="0")
        elif mode == "429-long":
            self.reply(429, b"slow down", "text/plain", Retry_After="3600")
        elif mode == "500":
            self.reply(500, b"internal error", "text/plain")
        elif mode == "503":
            self.reply(503, b"unavailable", "text/plain", Retry_After="0")
        elif mode == "400":
            self.reply(400, b"Parse error: line 1", "text/plain")
        elif mode == "hang":
            time.sleep(HANG)
            self.reply(200, GOOD, json_type)
        elif mode == "trickle":
            self.send_response(200)
            self.send_header("Content-Type", json_type)
            self.end_headers()
            for byte in GOOD[:40]:  # a byte every half second: each read is quick
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(HANG / 40)
        elif mode == "truncated":
            self.reply(200, GOOD[: len(GOOD) // 2], json_type)
        elif mode == "html":
            self.reply(200, b"<!DOCTYPE html><html><title>Maintenance</title></html>", "text/html")


@pytest.fixture(scope="module")
def faulty() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Faulty)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def endpoint(base: str, mode: str, **options: float) -> tuple[SparqlEndpoint, list[float]]:
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(min(seconds, 0.05))

    settings = {"timeout": 2.0, "retries": 2, "backoff": 0.01, "max_retry_wait": 30.0, **options}
    return SparqlEndpoint(f"{base}/{mode}", sleep=sleep, **settings), waits  # type: ignore[arg-type]


def run_bounded(ep: SparqlEndpoint, limit: float = 6.0) -> float:
    started = time.monotonic()
    try:
        ep.query(QUERY)
    finally:
        assert time.monotonic() - started < limit
    return time.monotonic() - started


def test_ok(faulty: str) -> None:
    ep, _ = endpoint(faulty, "ok")
    assert ep.query(QUERY).rows[0]["x"].value == "http://e.org/a"


def test_429_with_retry_after_is_honoured_then_succeeds(faulty: str) -> None:
    ep, waits = endpoint(faulty, "429-then-ok")
    assert ep.query(QUERY).rows
    assert waits == [1.0]


def test_429_forever_gives_up_after_retries(faulty: str) -> None:
    ep, waits = endpoint(faulty, "429")
    with pytest.raises(EndpointError, match=r"/429 failed after 3 attempts: HTTP 429"):
        run_bounded(ep)
    assert waits == [0.0, 0.0]


def test_retry_after_longer_than_allowed_fails_at_once(faulty: str) -> None:
    ep, waits = endpoint(faulty, "429-long")
    with pytest.raises(EndpointError, match="asked to retry after 3600 s"):
        run_bounded(ep)
    assert waits == []


def test_500_retried_with_backoff(faulty: str) -> None:
    ep, waits = endpoint(faulty, "500")
    with pytest.raises(EndpointError, match=r"/500 failed after 3 attempts: HTTP 500"):
        run_bounded(ep)
    assert waits == [0.01, 0.02]


def test_503_retried(faulty: str) -> None:
    ep, waits = endpoint(faulty, "503")
    with pytest.raises(EndpointError, match="HTTP 503"):
        run_bounded(ep)
    assert len(waits) == 2


def test_400_is_not_retried(faulty: str) -> None:
    """A caller's query the endpoint calls malformed is the caller's 400, not retried."""
    before = Faulty.hits["400"]
    ep, waits = endpoint(faulty, "400")
    with pytest.raises(BadRequest, match="rejected the query"):
        run_bounded(ep)
    assert Faulty.hits["400"] == before + 1 and waits == []


def test_hang_past_timeout(faulty: str) -> None:
    ep, waits = endpoint(faulty, "hang", timeout=1.0)
    with pytest.raises(EndpointTimeout, match=r"/hang did not answer within 1 s"):
        assert run_bounded(ep, limit=BOUND) < BOUND
    assert waits == []


def test_trickling_body_past_timeout(faulty: str) -> None:
    ep, _ = endpoint(faulty, "trickle", timeout=1.0)
    with pytest.raises(EndpointTimeout, match="/trickle"):
        run_bounded(ep, limit=BOUND)


def test_truncated_json(faulty: str) -> None:
    ep, _ = endpoint(faulty, "truncated")
    with pytest.raises(EndpointError, match=r"/truncated sent malformed or truncated results"):
        run_bounded(ep)


def test_html_error_page(faulty: str) -> None:
    ep, _ = endpoint(faulty, "html")
    with pytest.raises(EndpointError, match=r"/html sent an HTML page instead of SPARQL results"):
        run_bounded(ep)


def test_a_refused_connection_fails_at_once_with_a_hint_that_fits() -> None:
    """Nothing listens there: no retry can help, and the endpoint is not overloaded."""
    ep, waits = endpoint("http://127.0.0.1:9", "nothing")
    with pytest.raises(EndpointError, match="connection refused") as caught:
        run_bounded(ep)
    assert waits == []
    assert "check the URL and that the endpoint is running" in str(caught.value)
    assert "overloaded" not in str(caught.value)


def test_an_update_is_never_sent(faulty: str) -> None:
    before = sum(Faulty.hits.values())
    ep, _ = endpoint(faulty, "ok")
    with pytest.raises(ReadOnlyViolation):
        ep.query("INSERT DATA { <http://e.org/a> <http://e.org/p> <http://e.org/b> }")
    with pytest.raises(ReadOnlyViolation):
        ep._execute("DELETE WHERE { ?s ?p ?o }", 1.0)
    assert sum(Faulty.hits.values()) == before

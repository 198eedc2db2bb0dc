"""The reader's parts: where a request ends, and the thread that watches arriving
requests (socket pairs stand for connections)."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator

import pytest

from middleware.server.connections.arrival import Arrival, Limits
from middleware.server.connections.request_head import ChunkedBody, Framing, TooLarge, framing
from middleware.server.connections.request_reader import RequestReader
from tests.waiting import PATIENCE, until

HEAD = b"POST /x HTTP/1.1\r\nHost: x\r\n"


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (b"", Framing()),
        (b"Content-Length: 12\r\n", Framing(12)),
        (b"content-length:  12 \r\nContent-Length: 12\r\n", Framing(12)),  # the same twice
        (b"Content-Length: 5\r\nContent-Length: 6\r\n", Framing()),  # the parser refuses
        (b"Content-Length: -5\r\n", Framing()),
        (b"Content-Length: 1e3\r\n", Framing()),
        (b"Transfer-Encoding: gzip\r\n", Framing()),  # the parser answers 501
        (b"Transfer-Encoding: gzip, Chunked\r\n", Framing(chunked=True)),
        (b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", Framing(chunked=True)),
        (b"Expect: 100-continue\r\nContent-Length: 3\r\n", Framing(3, expects_continue=True)),
        (b"Expect: 100-continue\r\n", Framing()),  # no body: nothing to continue
        (b"X-Content-Length: 3\r\n", Framing()),
    ],
)
def test_the_body_a_head_declares(fields: bytes, expected: Framing) -> None:
    assert framing(HEAD + fields + b"\r\n") == expected


def test_chunks_too_large_are_refused_before_they_arrive() -> None:
    body = ChunkedBody(start=0, limit=1000)
    assert body.end(b"200\r\n") is None  # 512 declared: room for it
    with pytest.raises(TooLarge):
        ChunkedBody(start=0, limit=1000).end(b"200\r\n" + b"x" * 512 + b"\r\n400\r\n")


def test_a_line_that_is_no_chunk_size_ends_the_body_for_the_parser_to_refuse() -> None:
    assert ChunkedBody(start=0, limit=1000).end(b"zz\r\nrest") == 4


@pytest.fixture
def reader() -> Iterator[RequestReader]:
    made = RequestReader(most=2)
    yield made
    made.close()


def _arrival(sock: socket.socket) -> Arrival:
    return Arrival(sock, ("127.0.0.1", 1), sock, Limits(), time.monotonic())


def _whole(reader: RequestReader, seconds: float = 5.0) -> Arrival | None:
    if not select.select([reader.ready], [], [], seconds)[0]:
        return None
    return reader.take()


def test_a_request_watched_comes_out_whole() -> None:
    reader = RequestReader()
    ours, theirs = socket.socketpair()
    try:
        reader.watch(_arrival(ours))
        theirs.sendall(HEAD + b"Content-Length: 4\r\n\r\nab")
        assert _whole(reader, 0.2) is None
        theirs.sendall(b"cd")
        arrival = _whole(reader)
        assert arrival is not None and arrival.request.endswith(b"\r\n\r\nabcd")
    finally:
        reader.close()
        ours.close()
        theirs.close()


def test_past_its_most_the_reader_closes_the_one_watched_longest(reader: RequestReader) -> None:
    pairs = [socket.socketpair() for _ in range(3)]
    try:
        for ours, _ in pairs:
            reader.watch(_arrival(ours))
        pairs[0][1].settimeout(5)
        assert pairs[0][1].recv(1) == b""  # nothing came from it: closed without a word
        pairs[1][1].sendall(b"GET / HTTP/1.1\r\n\r\n")  # the others are still read
        assert _whole(reader) is not None
    finally:
        for ours, theirs in pairs:
            ours.close()
            theirs.close()


def test_a_lingering_close_ends_when_the_client_closes(reader: RequestReader) -> None:
    ours, theirs = socket.socketpair()
    with theirs:
        ours.shutdown(socket.SHUT_WR)
        reader.linger(ours)
        theirs.sendall(b"late bytes")  # read and dropped, so the close is no reset
        theirs.settimeout(PATIENCE)
        assert theirs.recv(1) == b""
        theirs.close()
        assert until(lambda: ours.fileno() < 0)

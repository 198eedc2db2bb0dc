"""A plain ``/sparql`` GET answered by the query executor, straight onto the connection.

Handing the result back to the service and writing it from there costs a process
wake-up, a copy and the response's assembly: about a tenth of a millisecond, as
much as the 1-hop query itself. When ``plain_get`` serves a request it offers the
connection (``DirectReply`` in the environ); the query pool passes the socket to the
executor (``kg/executors/delivery.py``) with the query and the head of a 200 response, and the executor sends the
whole response with one non-blocking write once the query has run. What that write
could not send (a full socket buffer, a large body) comes back to the service, which
sends it: the service alone ever blocks on a client. Errors are not written by the
executor: they come back and are rendered as on every other path.

>>> reply = DirectReply(software="kgmw")
>>> head = reply.head("application/sparql-results+json", [("X-Kgmw-Source", "sample")])
>>> head.split(b"\\r\\n")[0], head.endswith(b"X-Kgmw-Source: sample\\r\\n")
(b'HTTP/1.1 200 OK', True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from email.utils import formatdate

ENVIRON_KEY = "kgmw.direct_reply"  # set by the HTTP server alone: no header maps to it


@dataclass
class DirectReply:
    """A connection an executor may answer on, and what became of the offer."""

    software: str
    written: bool = False  # the executor began the response; ``rest`` is what it left
    rest: bytes = b""
    status: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)
    size: int = 0  # body bytes, for the access log

    def head(self, content_type: str, headers: list[tuple[str, str]]) -> bytes:
        """Status line and headers of a 200 response, up to ``Content-Length``."""
        self.status = "200 OK"
        self.headers = [("Content-Type", content_type), *headers]
        lines = [
            "HTTP/1.1 200 OK",
            f"Server: {self.software}",
            f"Date: {formatdate(usegmt=True)}",
            *(f"{name}: {value}" for name, value in self.headers),
        ]
        return ("\r\n".join(lines) + "\r\n").encode("latin-1")

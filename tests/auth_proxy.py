"""A small HTTP server on port 0 that checks request headers before passing a query on
to a real SPARQL server: what an endpoint behind HTTP authentication looks like."""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PASS_ON = ("Content-Type", "Accept")


class AuthProxy:
    """Answers 401 unless every header in ``required`` has its value; else forwards."""

    def __init__(self, target: str, required: dict[str, str]) -> None:
        self.target = target
        self.required = required
        self.seen: list[dict[str, str]] = []  # the headers of every request
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def _handle(self, body: bytes | None) -> None:
                proxy.seen.append(dict(self.headers.items()))
                if any(self.headers.get(k) != v for k, v in proxy.required.items()):
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="sparql"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                query = self.path.split("?", 1)[1] if "?" in self.path else ""
                url = proxy.target + ("?" + query if query else "")
                headers = {k: self.headers[k] for k in PASS_ON if self.headers.get(k)}
                forwarded = urllib.request.Request(url, data=body, headers=headers)
                with urllib.request.urlopen(forwarded, timeout=30) as answer:
                    data = answer.read()
                    self.send_response(answer.status)
                    self.send_header("Content-Type", answer.headers.get("Content-Type", ""))
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

            def do_GET(self) -> None:
                self._handle(None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self._handle(self.rfile.read(length))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/query"


@contextmanager
def auth_proxy(target: str, required: dict[str, str]) -> Iterator[AuthProxy]:
    """An :class:`AuthProxy` in front of ``target``, served from a thread."""
    proxy = AuthProxy(target, required)
    thread = threading.Thread(target=proxy.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.server.shutdown()
        proxy.server.server_close()


@contextmanager
def redirector(location: str) -> Iterator[AuthProxy]:
    """A server that answers every request with a 302 to ``location`` (its ``seen``
    records what it was sent)."""
    proxy = AuthProxy(location, {})

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            proxy.seen.append(dict(self.headers.items()))
            query = self.path.split("?", 1)[1] if "?" in self.path else ""
            self.send_response(302)
            self.send_header("Location", location + ("?" + query if query else ""))
            self.send_header("Content-Length", "0")
            self.end_headers()

    proxy.server.server_close()
    proxy.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    proxy.url = f"http://127.0.0.1:{proxy.server.server_address[1]}/query"
    thread = threading.Thread(target=proxy.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.server.shutdown()
        proxy.server.server_close()

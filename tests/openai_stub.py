"""A tiny OpenAI-compatible server whose replies come from a ScriptedLLM, for tests and
benchmarks that need a real HTTP LLM: ``/v1/chat/completions`` (plain and with a
``json_schema`` response format), ``/v1/completions`` and ``/v1/models``, each after
``delay`` seconds. It listens on port 0 and counts the requests it answered.

    with OpenAIStub(rok_script(), delay=0.5) as stub:
        llm = OpenAICompatLLM(base_url=stub.url)
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, cast

from middleware.llm.base import Message
from middleware.llm.options import match_option
from middleware.llm.scripted import ScriptedLLM


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        time.sleep(self.server.delay)
        if self.server.hold is not None:
            self.server.hold()
        with self.server.lock:
            self.server.requests += 1
        if self.path.endswith("/chat/completions"):
            text = self._reply(body["messages"], body)
            choice: dict[str, Any] = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
            self._send(200, self._body("chat.completion", choice, text))
        elif self.path.endswith("/completions"):
            text = self._reply([{"role": "user", "content": body["prompt"]}], body)
            choice = {"index": 0, "text": text, "finish_reason": "stop"}
            self._send(200, self._body("text_completion", choice, text))
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def _reply(self, messages: list[Message], body: dict[str, Any]) -> str:
        with self.server.lock:  # ScriptedLLM keeps a list of calls
            text = self.server.llm.complete(messages, stop=body.get("stop") or ()).text
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
        if schema:
            options = cast(list[str], schema["properties"]["choice"]["enum"])
            index = match_option(text, options)
            return json.dumps({"choice": options[index if index is not None else 0]})
        return text

    def _body(self, kind: str, choice: dict[str, Any], text: str) -> dict[str, Any]:
        return {
            "id": "stub-1",
            "object": kind,
            "created": 0,
            "model": "stub",
            "choices": [choice],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": len(text.split()),
                "total_tokens": 0,
            },
        }

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, llm: ScriptedLLM, delay: float, hold: Callable[[], object] | None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.llm = llm
        self.delay = delay
        self.hold = hold
        self.requests = 0
        self.lock = threading.Lock()


class OpenAIStub:
    """The stub server in a background thread; ``url`` is its ``/v1`` base URL. Each
    request sleeps ``delay`` seconds, then calls ``hold`` (a barrier's ``wait``, say)."""

    def __init__(
        self, llm: ScriptedLLM, *, delay: float = 0.0, hold: Callable[[], object] | None = None
    ) -> None:
        self._server = _Server(llm, delay, hold)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> int:
        return self._server.requests

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

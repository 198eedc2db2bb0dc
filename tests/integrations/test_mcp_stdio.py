"""``kgmw mcp`` over stdio, as a subprocess: a raw JSON-RPC client that checks every byte
on stdout, and the SDK's own client calling each tool. The LLM is an OpenAI-compatible
stub on a free port whose replies are RoK's scripted ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.cli_helpers import rok_script
from tests.openai_stub import OpenAIStub

pytestmark = pytest.mark.timeout(120)
TITANIC = "https://kgmw.dev/metaqa/entity/Titanic"
KGMW = Path(sys.executable).parent / "kgmw"  # as an agent host starts it


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(rok_script()) as running:
        yield running


def command(stub: OpenAIStub, *extra: str) -> list[str]:
    return [
        str(KGMW),
        "mcp",
        "--llm",
        "openai",
        "--llm-base-url",
        stub.url,
        "--no-cache",
        *extra,
    ]


def child_env() -> dict[str, str]:
    return {"KGMW_CACHE_DIR": os.environ["KGMW_CACHE_DIR"], "KGMW_PROGRESS": "true"}


def test_raw_json_rpc_client_sees_only_protocol_on_stdout(stub: OpenAIStub) -> None:
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "ask", "arguments": {"question": "Who directed Titanic?"}},
        },
    ]
    process = subprocess.Popen(
        command(stub),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **child_env()},
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    replies: dict[int, dict[str, Any]] = {}
    for message in messages:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        if "id" in message:
            line = process.stdout.readline()
            reply = json.loads(line)  # anything but JSON-RPC on stdout fails here
            assert reply["jsonrpc"] == "2.0" and reply["id"] == message["id"], reply
            replies[reply["id"]] = reply
    rest, errors = process.communicate(timeout=60)
    assert rest == "", f"non-protocol output on stdout: {rest[:200]!r}"
    assert process.returncode == 0, errors
    assert replies[1]["result"]["protocolVersion"] == "2025-06-18"
    assert replies[1]["result"]["serverInfo"]["name"] == "kg-middleware"
    names = {tool["name"] for tool in replies[2]["result"]["tools"]}
    assert {"ask", "sparql", "neighbors", "paths", "link"} <= names
    asked = replies[3]["result"]
    assert not asked.get("isError") and asked["structuredContent"]["answer"] == "James Cameron"
    assert "MCP over stdio" in errors  # what the server says goes to stderr


async def _session_calls(stub: OpenAIStub) -> dict[str, Any]:
    params = StdioServerParameters(command=str(KGMW), args=command(stub)[1:], env=child_env())
    found: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        found["tools"] = {t.name for t in (await session.list_tools()).tools}
        for name, arguments in [
            ("ask", {"question": "Who directed Titanic?", "method": "rok"}),
            ("sparql", {"query": f"SELECT ?o WHERE {{ <{TITANIC}> ?p ?o }} LIMIT 2"}),
            ("sparql", {"query": "DELETE WHERE { ?s ?p ?o }"}),
            ("neighbors", {"entity": "Titanic", "limit": 3}),
            ("paths", {"a": "Titanic", "b": "Kate Winslet", "max_hops": 1}),
            ("link", {"text": "kate winslet"}),
        ]:
            found.setdefault(name, []).append(await session.call_tool(name, arguments))
        found["sources"] = await session.read_resource("kgmw://sources")
    return found


def test_sdk_client_calls_every_tool_over_stdio(stub: OpenAIStub) -> None:
    found = anyio.run(_session_calls, stub)
    assert {"ask", "sparql", "neighbors", "paths", "link"} <= found["tools"]
    (asked,) = found["ask"]
    assert not asked.is_error and asked.structured_content["answer"] == "James Cameron"
    selected, refused = found["sparql"]
    assert len(selected.structured_content["results"]["bindings"]) == 2
    assert refused.is_error and "ReadOnlyViolation" in refused.content[0].text
    assert "updates are not allowed" in refused.content[0].text
    (near,) = found["neighbors"]
    assert near.structured_content["entity"] == TITANIC
    (paths,) = found["paths"]
    assert paths.structured_content["paths"]
    (linked,) = found["link"]
    assert linked.structured_content["entities"][0]["label"].lower() == "kate winslet"
    sources = json.loads(found["sources"].contents[0].text)["sources"]
    assert sources[0] == {"name": "default", "kind": "sample", "profile": "metaqa", "default": True}
    assert stub.requests >= 3  # RoK's calls went to the stub over HTTP

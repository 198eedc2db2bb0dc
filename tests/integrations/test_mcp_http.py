"""``kgmw mcp --http 127.0.0.1:0`` as a subprocess, called with the SDK's streamable HTTP
client; and the command's refusals of bad flags."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from middleware.cli.mcp import parse_address
from middleware.errors import BadRequest
from tests.cli_helpers import rok_script, run
from tests.openai_stub import OpenAIStub

pytestmark = pytest.mark.timeout(120)
KGMW = Path(sys.executable).parent / "kgmw"
TITANIC = "https://kgmw.dev/metaqa/entity/Titanic"


@pytest.fixture
def served() -> Iterator[str]:
    """The MCP URL of a server on a port the OS picked, named on its stderr."""
    with OpenAIStub(rok_script()) as stub:
        flags = ["--http", "127.0.0.1:0", "--llm", "openai", "--llm-base-url", stub.url]
        process = subprocess.Popen(
            [str(KGMW), "mcp", *flags, "--no-cache"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "KGMW_PROGRESS": "false"},
            text=True,
        )
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
        assert found, line
        try:
            yield found.group(1)
        finally:
            process.terminate()
            out, _ = process.communicate(timeout=30)
            assert out == ""  # HTTP mode writes nothing on stdout either


async def _calls(url: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = (await session.list_tools()).tools
        found["tools"] = {t.name for t in listed}
        found["schemas"] = {t.name: t.input_schema for t in listed}
        found["ask"] = await session.call_tool("ask", {"question": "Who directed Titanic?"})
        found["sparql"] = await session.call_tool(
            "sparql", {"query": f"ASK {{ <{TITANIC}> ?p ?o }}"}
        )
        found["neighbors"] = await session.call_tool("neighbors", {"entity": TITANIC, "limit": 2})
        found["paths"] = await session.call_tool("paths", {"a": "Titanic", "b": "James Cameron"})
        found["link"] = await session.call_tool("link", {"text": "Titanic", "limit": 2})
        found["missing"] = await session.call_tool("neighbors", {"entity": "zzqx nothing"})
        found["bad"] = await session.call_tool("neighbors", {"entity": "x", "direction": "up"})
        found["profiles"] = await session.read_resource("kgmw://profiles")
    return found


def test_sdk_client_over_streamable_http(served: str) -> None:
    anyio.run(_calls, served)  # a first session, ended: the sources stay open for others
    found = anyio.run(_calls, served)
    assert {"ask", "sparql", "neighbors", "paths", "link"} <= found["tools"]
    assert found["ask"].structured_content["answer"] == "James Cameron"
    assert found["sparql"].structured_content["boolean"] is True
    assert len(found["neighbors"].structured_content["triples"]) == 2
    assert found["paths"].structured_content["paths"]
    assert found["link"].structured_content["entities"]
    assert found["missing"].is_error and "NotFound" in found["missing"].content[0].text
    assert found["bad"].is_error and "direction" in found["bad"].content[0].text
    direction = found["schemas"]["neighbors"]["properties"]["direction"]
    assert direction["enum"] == ["both", "out", "in"]
    assert "rok" in found["schemas"]["ask"]["properties"]["method"]["description"]
    assert '"metaqa"' in found["profiles"].contents[0].text


@pytest.mark.parametrize("text", ["8765", "host:", ":80", "h:99999", "h:port"])
def test_bad_http_address_is_refused(text: str) -> None:
    with pytest.raises(BadRequest, match="HOST:PORT"):
        parse_address(text)


def test_http_addresses() -> None:
    assert parse_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_address("[::1]:8765") == ("::1", 8765)


def test_source_and_store_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "mcp", "--source", "wiki", "--store", "/tmp/x")
    assert code == 2 and "not both" in err


def test_the_package_and_cli_load_without_the_sdk() -> None:
    """Only ``kgmw mcp`` imports the MCP SDK, so it stays an optional extra."""
    probe = "import sys, middleware, middleware.cli; print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp'))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_without_the_sdk_the_command_says_which_extra(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [
        n
        for n in sys.modules
        if n == "mcp" or n.startswith(("mcp.", "middleware.integrations.mcp_server"))
    ]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if not installed
    code, out, err = run(capsys, "mcp")
    assert code == 1 and out == ""
    assert "needs the MCP SDK" in err and "kg-middleware[mcp]" in err

"""kg-middleware as an MCP server (the ``mcp`` extra): tools ``ask``, ``sparql``,
``neighbors``, ``paths`` and ``link``; resources ``kgmw://sources`` and
``kgmw://profiles``.

Each tool runs ``GraphTools``' blocking call on a worker thread, so one slow answer does
not hold up the others. A ``MiddlewareError`` (a refused query, an unknown entity, a
budget spent) comes back as a tool error carrying its message and hint; anything else
is a crash the SDK reports without details. Over stdio, stdout carries only the
protocol: the SDK moves file descriptor 1 to stderr while it serves, and the sources and
the LLM open after that, on first use.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from middleware.errors import MiddlewareError
from middleware.integrations.mcp_tools import GraphTools
from middleware.methods.registry import METHODS
from middleware.server.state import ServiceState
from middleware.support.version import package_version

INSTRUCTIONS = (
    "Answers questions from RDF knowledge graphs with their evidence (ask), runs "
    "read-only SPARQL (sparql), and explores the graph: neighbours of an entity, paths "
    "between two entities, entities a text may name (link). Entities may be given by "
    "IRI or by label. Resources kgmw://sources and kgmw://profiles list the sources."
)

Source = Annotated[
    str | None, Field(description="A configured source name (default: the default source).")
]
Entity = Annotated[str, Field(description="An entity: its IRI, or a label to link.")]
Limit = Annotated[int | None, Field(ge=1, description="Most results (default: setting).")]
MethodName = Annotated[
    str | None,
    Field(description=f"How to answer: one of {', '.join(METHODS)} (default: setting method)."),
]


async def _call(work: Callable[[], Any]) -> dict[str, Any]:
    """``work`` on a worker thread; a middleware error becomes the tool's error text."""
    try:
        result: dict[str, Any] = await anyio.to_thread.run_sync(work)
    except MiddlewareError as err:
        raise ToolError(f"{type(err).__name__}: {err}") from err
    return result


def build_server(state: ServiceState) -> MCPServer[Any]:
    """An MCP server over ``state``'s sources and LLM, ready for any transport; every
    session shares them (the caller closes ``state`` when the server has stopped)."""

    server: MCPServer[Any] = MCPServer(
        "kg-middleware",
        version=package_version(),
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    tools = GraphTools(state)

    @server.tool(
        description="Answer a question from the knowledge graph, with its evidence and the "
        "chains of facts that support the answer. When the graph does not hold the answer, "
        "answer is null and guess holds what the method would have said, not supported by "
        "the graph; summary says it in words."
    )
    async def ask(
        question: Annotated[str, Field(description="The question, in natural language.")],
        method: MethodName = None,
        source: Source = None,
    ) -> dict[str, Any]:
        return await _call(lambda: tools.ask(question, method, source))

    @server.tool(
        description="Run a read-only SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) with the "
        "/sparql proxy's limits; updates and unlisted SERVICE calls are refused."
    )
    async def sparql(
        query: Annotated[str, Field(description="The SPARQL query text.")], source: Source = None
    ) -> dict[str, Any]:
        return await _call(lambda: tools.sparql(query, source))

    @server.tool(description="The triples around an entity, each with its text.")
    async def neighbors(
        entity: Entity,
        direction: Annotated[
            Literal["both", "out", "in"], Field(description="Which edges to follow.")
        ] = "both",
        limit: Limit = None,
        source: Source = None,
    ) -> dict[str, Any]:
        return await _call(lambda: tools.neighbors(entity, direction, limit, source))

    @server.tool(description="Paths between two entities, each with its text.")
    async def paths(
        a: Entity,
        b: Entity,
        max_hops: Annotated[
            int | None, Field(ge=1, le=3, description="Longest path, 1-3 (default: setting).")
        ] = None,
        limit: Limit = None,
        source: Source = None,
    ) -> dict[str, Any]:
        return await _call(lambda: tools.paths(a, b, max_hops, limit, source))

    @server.tool(description="The graph entities a text span may name, best first.")
    async def link(
        text: Annotated[str, Field(description="A name or mention, e.g. 'ridley scot'.")],
        limit: Limit = None,
        source: Source = None,
    ) -> dict[str, Any]:
        return await _call(lambda: tools.link(text, limit, source))

    @server.resource("kgmw://sources", mime_type="application/json", description="Sources")
    def sources() -> str:
        return json.dumps(tools.sources())

    @server.resource("kgmw://profiles", mime_type="application/json", description="Profiles")
    def profiles() -> str:
        return json.dumps(tools.profiles())

    return server


def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve on stdin/stdout until the client closes stdin."""
    anyio.run(server.run_stdio_async)


def serve_http(server: MCPServer[Any], host: str, port: int) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp`` (port 0: a free port, named on
    stderr once the socket listens)."""
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # connections wait in the backlog from the moment the URL is named
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"kgmw: MCP over streamable HTTP at http://{shown}:{bound}/mcp", file=sys.stderr)
    sys.stderr.flush()
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, log_level="warning")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))

"""``kgmw mcp``: serve the graph tools to agent hosts over the Model Context Protocol."""

from __future__ import annotations

import click

from middleware.cli.serve import loopback
from middleware.cli.support import LLMArgs, llm_options, settings_for
from middleware.errors import BadRequest, ConfigError
from middleware.server.state import ServiceState


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as a host and a port 0-65535."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise BadRequest(
            f"--http takes HOST:PORT, not {text!r}", hint="e.g. --http 127.0.0.1:8765 (port 0: any)"
        )
    return host, int(port)


@click.command("mcp")
@click.option(
    "--http",
    "address",
    metavar="HOST:PORT",
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0: a free port).",
)
@click.option(
    "--store",
    type=click.Path(file_okay=False),
    help="Local store directory for the default source.",
)
@click.option("--endpoint", help="SPARQL endpoint URL for the default source.")
@click.option("--profile", help="Profile of the default source.")
@click.option(
    "--source",
    "source_name",
    metavar="NAME",
    help="Make the config file's [sources.NAME] the default source; not with --store/--endpoint.",
)
@llm_options
@click.pass_context
def mcp_command(
    ctx: click.Context,
    address: str | None,
    store: str | None,
    endpoint: str | None,
    profile: str | None,
    source_name: str | None,
    llm: LLMArgs,
) -> None:
    """Serve ask, sparql, neighbors, paths and link as MCP tools (stdio by default)."""
    if source_name and (store or endpoint):
        raise BadRequest("give --source NAME or --store/--endpoint, not both")
    where = parse_address(address) if address else None
    try:
        from middleware.integrations.mcp_server import build_server, serve_http, serve_stdio
    except ImportError as err:
        raise ConfigError(
            f"kgmw mcp needs the MCP SDK ({err.name} is missing)",
            hint="pip install 'kg-middleware[mcp]'",
        ) from err
    settings = settings_for(ctx, **llm.overrides())
    settings = settings.replace(store=store, endpoint=endpoint, profile=profile)
    # --source NAME is the default source, with its own table; the others keep theirs
    state = ServiceState(settings, default=source_name, overrides={"profile": profile})
    server = build_server(state)
    try:
        if where is None:
            click.echo(
                "kgmw: MCP over stdio; the client ends the session by closing stdin", err=True
            )
            serve_stdio(server)
        else:
            if not loopback(where[0]):
                click.echo(
                    f"kgmw: warning: MCP over HTTP on {where[0]} has no API keys; anyone who "
                    "can reach it may ask questions and run queries",
                    err=True,
                )
            serve_http(server, *where)
    finally:
        state.close()

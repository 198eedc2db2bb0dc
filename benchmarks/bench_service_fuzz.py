"""The long run of the SERVICE fuzz: generated spellings by every way in, 0 connections.

    ../.venv/bin/python bench_service_fuzz.py [--count 200000] [--seed 21]

The test suite sends 10,000 spellings (``tests/server/test_service_fuzz.py``); this
sends ``--count`` of them, in four rounds: without an allowlist and with one, each with
the guard's own SERVICE check on and off (off: the spellings reach the engine, and the
executors' network namespace alone stands between them and the listener). Each
spelling goes by the next way in: ``/sparql`` (GET, POST body, form) on the service,
``kgmw query`` (the command, in-process, over the same store), the LangChain
``kg_sparql`` tool and the MCP ``sparql`` tool. Reported per round: spellings, what
became of them (refused by the guard, run by the engine and failed, run with an
answer), connections the listener saw (must be 0), and spellings per second.
"""

from __future__ import annotations

import argparse
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
from click.testing import CliRunner
from common import save

import middleware.cli.support as cli_support
import middleware.kg.sparql_guard as sparql_guard
from middleware.cli import cli
from middleware.config import Settings
from middleware.errors import BadRequest, MiddlewareError
from middleware.integrations.langchain_tools import kg_tools
from middleware.integrations.mcp_tools import GraphTools
from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app
from middleware.server.connections.loopback_server import LoopbackServer
from middleware.server.state import ServiceState
from middleware.testing.service_spellings import Listener, spellings


def outcome_of(status: int | None, error: BaseException | str | None) -> str:
    """answered; the engine called out and met no network; refused (the guard, or
    not SPARQL the engine reads); or something else, named."""
    text = str(error or "").lower()
    if status == 200 or (status is None and not text):
        return "answered"
    if any(word in text for word in ("unreachable", "refused (os error", "os error")):
        return "engine called out, met no network"
    refusals = ("not a valid", "not allowed", "glued", "reads as", "cannot run this query")
    if status == 400 or isinstance(error, BadRequest) or any(w in text for w in refusals):
        return "refused, or not SPARQL the engine reads"
    return f"other ({status or type(error).__name__}: {text[:60]})"


def ways_in(
    store: LocalStore, values: dict[str, Any]
) -> tuple[dict[str, Callable[[str], str]], Any]:
    settings = Settings.load(config_path=None, env={}, overrides={"sparql_penalty": 0.0, **values})
    server = LoopbackServer("127.0.0.1", 0, create_app(settings, graphs={"small": store}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/sparql"
    client = httpx.Client(timeout=30)
    cli_support.open_graph = lambda _settings: store  # type: ignore[assignment]
    env = {f"KGMW_{k.upper()}": str(v) for k, v in values.items()}
    runner = CliRunner(env=env)
    tool = kg_tools(graph=store, settings=settings, llm=ScriptedLLM(default="x"))[1]
    mcp = GraphTools(ServiceState(settings, graphs={"small": store}))

    def web(send: Callable[[str], httpx.Response]) -> Callable[[str], str]:
        def way(query: str) -> str:
            response = send(query)
            return outcome_of(response.status_code, response.text)

        return way

    def command(query: str) -> str:
        result = runner.invoke(cli, ["query", query])
        if result.exit_code == 0:
            return "answered"
        return outcome_of(0, result.exception or result.output)

    def langchain(query: str) -> str:
        said = str(tool.run(query))
        return outcome_of(None, None if said.startswith("{") else said)

    def model_context(query: str) -> str:
        try:
            mcp.sparql(query)
        except MiddlewareError as err:
            return outcome_of(err.status, err)
        return "answered"

    ways = {
        "/sparql GET": web(lambda q: client.get(url, params={"query": q})),
        "/sparql POST": web(
            lambda q: client.post(
                url, content=q.encode(), headers={"Content-Type": "application/sparql-query"}
            )
        ),
        "/sparql form": web(lambda q: client.post(url, data={"query": q})),
        "kgmw query": command,
        "kg_sparql": langchain,
        "MCP sparql": model_context,
    }
    return ways, server


def main() -> None:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args()
    store = LocalStore()
    store.load_text("<http://e/a> <http://e/p> <http://e/b> .\n", name="small.nt")
    trap, allowed = Listener(), Listener()
    allowlist = {"sparql_service_allowlist": f"http://127.0.0.1:{allowed.port}/allowed"}
    plain_services = sparql_guard._services
    rounds = []
    share = args.count // 4
    for n, (name, values, guarded) in enumerate(
        [
            ("no allowlist, guard on", {}, True),
            ("no allowlist, guard's SERVICE check off", {}, False),
            ("allowlist, guard on", allowlist, True),
            ("allowlist, guard's SERVICE check off", allowlist, False),
        ]
    ):
        sparql_guard._services = plain_services if guarded else (lambda *_: ())  # type: ignore[assignment]
        ways, server = ways_in(store, values)
        names = list(ways)
        outcomes: Counter[str] = Counter()
        began = time.perf_counter()
        for i, text in enumerate(spellings("127.0.0.1", trap.port, share, seed=args.seed + n)):
            outcomes[ways[names[i % len(names)]](text)] += 1
            if i and i % 10_000 == 0:
                print(f"  {name}: {i:,} sent, {trap.connections} connections", flush=True)
        seconds = time.perf_counter() - began
        server.shutdown()
        time.sleep(0.3)
        rounds.append(
            {
                "round": name,
                "spellings": share,
                "outcomes": dict(outcomes),
                "connections": trap.connections,
                "per_second": round(share / seconds, 1),
            }
        )
        print(rounds[-1], flush=True)
    sparql_guard._services = plain_services  # type: ignore[assignment]
    total = sum(r["spellings"] for r in rounds)
    print(f"{total:,} spellings, {trap.connections} connections to the listener")
    save("service_fuzz", {"rounds": rounds, "spellings": total, "connections": trap.connections})


if __name__ == "__main__":
    main()

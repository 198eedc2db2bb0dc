"""Caller SPARQL cannot reach the network, in any spelling, by any way in.

Generated spellings of a SERVICE call to a local listener go through the four ways a
caller's query reaches a local store: ``/sparql`` (GET, POST body, form), ``kgmw
query``, the LangChain ``kg_sparql`` tool and the MCP ``sparql`` tool. The listener
must see no connection, with and without an allowlist, and still none with the guard's
own SERVICE check turned off: the executors have no network. The control: a target on
the allowlist does receive its connection, by every way in.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from flask import Flask

import middleware.kg.sparql_guard as sparql_guard
from middleware import workspace as workspace_module
from middleware.cli import cli
from middleware.integrations.langchain_tools import kg_tools
from middleware.integrations.mcp_tools import GraphTools
from middleware.kg.backends.local import LocalStore
from middleware.kg.executors.probe import isolation
from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app
from middleware.server.state import ServiceState
from middleware.testing.service_spellings import spellings
from tests.kg.test_sparql_guard import Listener, settle
from tests.server.conftest import LiveServer, settings
from tests.waiting import until

COUNT = int(os.environ.get("KGMW_FUZZ_COUNT", "10000"))  # spellings without an allowlist
WITH_ALLOWLIST = max(1, COUNT // 5)  # and as many more again, fifth as many, with one

Way = Callable[[str], Any]


@pytest.fixture(scope="module")
def small_store() -> Iterator[LocalStore]:
    """A few triples in memory: the executors open its snapshot."""
    store = LocalStore()
    store.load_text(
        "<http://e/a> <http://e/p> <http://e/b> .\n<http://e/b> <http://e/q> <http://e/c> .\n",
        name="small.nt",
    )
    yield store
    store.close()


@pytest.fixture
def trap() -> Iterator[Listener]:
    listener = Listener()
    yield listener
    listener.socket.close()


@pytest.fixture
def allowed() -> Iterator[Listener]:
    listener = Listener()
    yield listener
    listener.socket.close()


def ways_in(
    serve: Callable[[Flask], LiveServer],
    store: LocalStore,
    values: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Way]:
    """Each way a caller's query reaches ``store`` under settings ``values``."""
    chosen = settings(sparql_penalty=0.0, timeout=5.0, **values)
    server = serve(create_app(chosen, graphs={"small": store}))
    url = f"{server.url}/sparql"
    client = httpx.Client(timeout=30)
    monkeypatch.setattr(workspace_module, "open_graph", lambda _settings: store)
    for name, value in values.items():
        monkeypatch.setenv(f"KGMW_{name.upper()}", str(value))
    runner = CliRunner()
    sparql_tool = kg_tools(graph=store, settings=chosen, llm=ScriptedLLM(default="x"))[1]
    mcp = GraphTools(ServiceState(chosen, graphs={"small": store}))

    def quietly(call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as err:  # refused or failed: either way, no connection
            return err

    return {
        "/sparql GET": lambda q: client.get(url, params={"query": q}),
        "/sparql POST": lambda q: client.post(
            url, content=q.encode(), headers={"Content-Type": "application/sparql-query"}
        ),
        "/sparql form": lambda q: client.post(url, data={"query": q}),
        "kgmw query": lambda q: runner.invoke(cli, ["query", q]),
        "kg_sparql": lambda q: quietly(lambda: sparql_tool.run(q)),
        "MCP sparql": lambda q: quietly(lambda: mcp.sparql(q)),
    }


def fuzz(ways: dict[str, Way], texts: Iterator[str]) -> dict[str, int]:
    """Each text by the next way in, round the ways; how many went each way."""
    names = list(ways)
    sent = dict.fromkeys(names, 0)
    for n, text in enumerate(texts):
        name = names[n % len(names)]
        ways[name](text)
        sent[name] += 1
    return sent


@pytest.mark.slow
@pytest.mark.parametrize("guarded", [True, False], ids=["guard on", "guard's SERVICE check off"])
def test_no_spelling_reaches_the_network_by_any_way_in(
    serve: Callable[[Flask], LiveServer],
    small_store: LocalStore,
    trap: Listener,
    allowed: Listener,
    monkeypatch: pytest.MonkeyPatch,
    guarded: bool,
) -> None:
    """With the guard, most spellings are refused before they run; without its SERVICE
    check (a test hook) they reach the engine, which calls out and meets no network."""
    count = COUNT if guarded else WITH_ALLOWLIST
    if not guarded:
        monkeypatch.setattr(sparql_guard, "_services", lambda *_: ())
    ways = ways_in(serve, small_store, {}, monkeypatch)
    sent = fuzz(ways, spellings("127.0.0.1", trap.port, count, seed=11))
    assert sum(sent.values()) >= count and min(sent.values()) >= count // 7
    assert settle(trap) == 0
    allowlist = {"sparql_service_allowlist": f"http://127.0.0.1:{allowed.port}/allowed"}
    ways = ways_in(serve, small_store, allowlist, monkeypatch)
    fuzz(ways, spellings("127.0.0.1", trap.port, WITH_ALLOWLIST, seed=12))
    assert settle(trap) == 0


# the spellings reported against the lexer-only guard: each reached the listener
REPORTED = [
    "SELECT * WHERE {{ SERVICESILENT<http://127.0.0.1:{port}/x> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ servicesilent<http://127.0.0.1:{port}/x> {{ ?s ?p ?o }} }}",
    "PREFIX ex: <http://127.0.0.1:{port}/> SELECT * WHERE {{ SERVICEex:c {{ ?s ?p ?o }} }}",
]
# with the allowlist naming {allowed}: a prefix named SILENTx: reads as SILENT x:
REPORTED_ALLOWLIST = (
    "PREFIX SILENTx: <{allowed}> PREFIX x: <http://127.0.0.1:{port}/evil> "
    "SELECT * {{ SERVICE SILENTx: {{?s ?p ?o}} }}"
)


@pytest.mark.parametrize("spelling", REPORTED, ids=["SERVICESILENT", "servicesilent", "SERVICEex"])
def test_the_reported_spellings_reach_nothing(
    serve: Callable[[Flask], LiveServer],
    small_store: LocalStore,
    trap: Listener,
    monkeypatch: pytest.MonkeyPatch,
    spelling: str,
) -> None:
    ways = ways_in(serve, small_store, {}, monkeypatch)
    for way in ways.values():
        way(spelling.format(port=trap.port))
    assert settle(trap) == 0


def test_a_prefix_named_like_silent_does_not_reach_past_the_allowlist(
    serve: Callable[[Flask], LiveServer],
    small_store: LocalStore,
    trap: Listener,
    allowed: Listener,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = f"http://127.0.0.1:{allowed.port}/allowed"
    ways = ways_in(serve, small_store, {"sparql_service_allowlist": target}, monkeypatch)
    query = REPORTED_ALLOWLIST.format(allowed=target, port=trap.port)
    said = ways["/sparql GET"](query)
    assert said.status_code == 400 and "SILENT" in said.json()["message"]
    for way in ways.values():
        way(query)
    assert settle(trap) == 0


def test_without_the_guards_service_check_the_executors_still_reach_nothing(
    serve: Callable[[Flask], LiveServer],
    small_store: LocalStore,
    trap: Listener,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The guard's SERVICE check off (a test hook): the engine makes the call, and the
    namespace stops it."""
    monkeypatch.setattr(sparql_guard, "_services", lambda *_: ())
    ways = ways_in(serve, small_store, {}, monkeypatch)
    query = f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{trap.port}/x> {{ ?s ?p ?o }} }}"
    said = {name: way(query) for name, way in ways.items()}
    assert settle(trap) == 0
    if isolation()[0] is None:  # no namespaces here: refused by its letters instead
        assert said["/sparql GET"].status_code == 400
        return
    web = said["/sparql GET"]
    assert web.status_code == 400 and "unreachable" in web.text.lower(), web.text  # it tried
    assert "sparql_service_allowlist" in web.json()["hint"]
    cli_said = said["kgmw query"]
    assert "unreachable" in f"{cli_said.output} {cli_said.exception}".lower()
    assert "unreachable" in str(said["kg_sparql"]).lower()


def test_an_allowlisted_target_is_reached_by_every_way_in(
    serve: Callable[[Flask], LiveServer],
    small_store: LocalStore,
    allowed: Listener,
    trap: Listener,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = f"http://127.0.0.1:{allowed.port}/allowed"
    ways = ways_in(serve, small_store, {"sparql_service_allowlist": target}, monkeypatch)
    for name, way in ways.items():
        before = allowed.connections
        way(f"SELECT * WHERE {{ SERVICE <{target}> {{ ?s ?p ?o }} }}")
        assert until(lambda before=before: allowed.connections > before), name
    # the same host and port, another path: the guard refuses it, and so would the outlet
    way = ways["/sparql GET"]
    assert (
        way(
            f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{allowed.port}/evil> {{ ?s ?p ?o }} }}"
        ).status_code
        == 400
    )
    assert settle(trap) == 0


def test_executors_are_cut_off_the_network_where_ci_runs() -> None:
    mechanism, why = isolation()
    if mechanism is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"query executors are not isolated on this CI machine: {why}")
        pytest.skip(f"no network namespaces here: {why}")
    assert "namespace" in mechanism

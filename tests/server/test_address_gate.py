"""Refused addresses are held, then closed, at the connection before HTTP is read: one
table of them for all of gunicorn's workers."""

from __future__ import annotations

import http.client
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlencode

import pytest

from middleware.errors import RateLimited
from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app
from middleware.server.connections.address_gate import AddressGate, client_network
from middleware.server.connections.tarpit import Tarpit
from middleware.server.guard import PenaltyBox
from tests.server.conftest import settings
from tests.server.test_cli_serve import environment, start  # noqa: F401 (fixture)
from tests.waiting import PATIENCE, until

NESTED = "SELECT * WHERE " + "{" * 200 + "}" * 200  # past sparql_max_depth: a strike


def test_a_refusal_holds_for_its_seconds_then_ends() -> None:
    now = [100.0]
    gate = AddressGate(slots=16, clock=lambda: now[0])
    gate.refuse("10.0.0.7", seconds=30)
    gate.refuse("2001:db8::1", seconds=5)
    assert gate.refused("10.0.0.7") and gate.refused("2001:db8::1")
    assert not gate.refused("10.0.0.8") and not gate.refused("not an address")
    now[0] += 10
    assert gate.refused("10.0.0.7") and not gate.refused("2001:db8::1")
    gate.refuse("10.0.0.7", seconds=1)  # a shorter refusal does not cut a longer one
    now[0] += 15
    assert gate.refused("10.0.0.7")
    now[0] += 10
    assert not gate.refused("10.0.0.7")


def test_an_ipv6_caller_cannot_escape_by_rotating_through_its_network() -> None:
    gate = AddressGate(slots=16)
    gate.refuse("2001:db8:1:2::7", seconds=30)
    assert gate.refused("2001:db8:1:2:ffff::1")  # the same /64
    assert not gate.refused("2001:db8:1:3::7")  # the next network
    gate.refuse("::ffff:192.0.2.5", seconds=30)  # IPv4 as seen by a dual-stack socket
    assert gate.refused("192.0.2.5") and not gate.refused("192.0.2.6")


def test_a_full_table_gives_up_the_refusal_that_ends_first() -> None:
    now = [0.0]
    gate = AddressGate(slots=4, clock=lambda: now[0])
    for last, seconds in ((1, 50), (2, 10), (3, 60), (4, 70)):
        gate.refuse(f"192.0.2.{last}", seconds=seconds)
    gate.refuse("192.0.2.9", seconds=80)
    assert gate.refused("192.0.2.9") and not gate.refused("192.0.2.2")
    assert all(gate.refused(f"192.0.2.{last}") for last in (1, 3, 4))


def test_a_refusal_made_in_a_forked_process_is_seen_by_its_siblings() -> None:
    gate = AddressGate()
    child = os.fork()
    if child == 0:
        gate.refuse("198.51.100.4", seconds=60)
        os._exit(0)
    os.waitpid(child, 0)
    assert gate.refused("198.51.100.4")


def test_held_connections_close_after_their_seconds_and_a_full_pit_closes_at_once() -> None:
    # Held 2 s: the checks that they are still held take a fraction of a second, 2 s
    # leaves them ten times that and more on a busy machine (at 0.3 s they could fail).
    pit = Tarpit(seconds=2.0, capacity=2)
    pairs = [socket.socketpair() for _ in range(3)]
    for ours, _ in pairs:
        pit.hold(ours)
    theirs = [peer for _, peer in pairs]
    theirs[2].settimeout(PATIENCE)
    assert theirs[2].recv(1) == b""  # past capacity: closed at once
    theirs[0].settimeout(0.1)
    with pytest.raises(TimeoutError):
        theirs[0].recv(1)  # held: nothing, not even the close
    assert pit.held() == 2
    theirs[0].settimeout(PATIENCE)
    assert theirs[0].recv(1) == b""
    assert until(lambda: pit.held() == 0)


def _get(url: str, source: str, path: str, headers: dict[str, str]) -> int | str:
    """The HTTP status of a GET from ``source``, or the name of the error that ended it."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30, source_address=(source, 0))
    try:
        connection.request("GET", path, headers=headers)
        return connection.getresponse().status
    except (ConnectionError, http.client.RemoteDisconnected) as err:
        return type(err).__name__
    finally:
        connection.close()


@contextmanager
def _serving(env: dict[str, str], *args: str, **values: str) -> Iterator[str]:
    """``kgmw serve *args`` with settings ``values`` (by name) in its environment."""
    env.update({f"KGMW_{name.upper()}": value for name, value in values.items()})
    with start(list(args), env) as (url, _):
        yield url


def _status(url: str, source: str, query: str = "ASK {}") -> int | str:
    """A /sparql GET with the test key, from ``source``."""
    key = {"Authorization": "Bearer serve-test-key"}
    return _get(url, source, "/sparql?" + urlencode({"query": query}), key)


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"], ids=["development server", "gunicorn"])
def test_a_boxed_address_is_closed_before_its_request_is_read(
    environment: dict[str, str],  # noqa: F811
    workers: str,
) -> None:
    with _serving(  # callers known by their address: no keys
        environment,
        "--workers",
        workers,
        sparql_penalty="60",
        server_refused_hold="0.5",
        server_api_keys="",
    ) as url:
        assert _status(url, "127.0.0.5") == 200
        statuses = []
        while len(statuses) < 12:
            statuses.append(_status(url, "127.0.0.5", NESTED))
            if isinstance(statuses[-1], str):
                break
        assert statuses[0] == 400  # the first few: the limit, named in a 400
        assert statuses[-1] in ("RemoteDisconnected", "ConnectionResetError")
        began = time.monotonic()
        assert _status(url, "127.0.0.5") in ("RemoteDisconnected", "ConnectionResetError")
        assert time.monotonic() - began >= 0.4  # held unread, then closed
        assert _status(url, "127.0.0.1") == 200  # everyone else is served


@pytest.mark.slow
def test_an_address_past_its_failed_authentications_is_closed_at_the_connection(
    environment: dict[str, str],  # noqa: F811
) -> None:
    wrong = {"Authorization": "Bearer wrong"}
    with _serving(environment, server_auth_failures="3", server_refused_hold="0.2") as url:
        statuses = [_get(url, "127.0.0.6", "/v1/sources", wrong) for _ in range(6)]
        assert statuses[:3] == [401, 401, 401] and statuses[3] == 429
        assert statuses[-1] in ("RemoteDisconnected", "ConnectionResetError")
        assert _status(url, "127.0.0.1") == 200


def test_a_caller_boxed_by_one_worker_is_refused_by_every_worker() -> None:
    gate = AddressGate()
    first, second = PenaltyBox(60, gate=gate), PenaltyBox(60, gate=gate)  # two workers
    child = os.fork()
    if child == 0:
        first.punish("key:analyst")  # in the first worker's process
        os._exit(0)
    os.waitpid(child, 0)
    with pytest.raises(RateLimited) as refused:
        second.check("key:analyst")
    assert refused.value.retry_after > 50
    second.check("key:other")  # nobody else
    assert not gate.refused("127.0.0.1")  # a key's box is not an address's


@pytest.mark.slow
def test_behind_a_reverse_proxy_refusals_stay_429s_on_sparql(
    environment: dict[str, str],  # noqa: F811
) -> None:
    with _serving(
        environment, sparql_penalty="60", server_refuse_at_connection="false", server_api_keys=""
    ) as url:
        statuses = [_status(url, "127.0.0.7", NESTED) for _ in range(6)]
        assert statuses[:4] == [400] * 4 and statuses[-1] == 429  # boxed, in the app
        assert _get(url, "127.0.0.7", "/healthz", {}) == 200  # still reaches the service


def test_this_machines_own_address_is_never_refused_at_the_connection() -> None:
    """Every local client shares 127.0.0.1 (a health probe, the page, a reverse proxy):
    one runaway from it must not close the service to all of them for a minute. Its
    callers are still boxed in the app (429s)."""
    gate = AddressGate()
    box = PenaltyBox(60, gate=gate)
    for own in ("127.0.0.1", "::1", "::ffff:127.0.0.1"):  # the last: a dual-stack socket
        box.punish(f"addr:{own}")
        assert not gate.refused(own)
        with pytest.raises(RateLimited):
            box.check(f"addr:{own}")
    box.punish("addr:127.0.0.9")
    assert gate.refused("127.0.0.9")  # another address still is


def test_an_ipv6_client_is_counted_by_its_64_network() -> None:
    one, other = "2001:db8:1:2:aaaa::1", "2001:db8:1:2:bbbb:cccc:dddd:9"
    assert client_network(one) == client_network(other) == "2001:db8:1:2::/64"
    assert client_network("2001:db8:1:3::1") != client_network(one)
    assert client_network("10.0.0.1") == "10.0.0.1"
    assert client_network("::ffff:10.0.0.1") == "10.0.0.1"
    assert client_network("::1") == "::1"  # this machine stays itself
    assert client_network("not an address") == "not an address"
    gate = AddressGate(slots=64)
    gate.refuse(client_network(one), seconds=30)
    assert gate.refused(other) and not gate.refused("2001:db8:1:3::1")


def test_failed_authentications_rotating_through_one_64_add_up(sample_graph: LocalStore) -> None:
    app = create_app(
        settings(server_api_keys="good", server_auth_failures=2),
        llm=ScriptedLLM(default="x"),
        graphs={"sample": sample_graph},
    )
    client = app.test_client()

    def status(address: str, key: str) -> int:
        environ = {"REMOTE_ADDR": address}
        headers = {"Authorization": f"Bearer {key}"}
        return client.get("/v1/sources", headers=headers, environ_base=environ).status_code

    assert status("2001:db8:1:2::a", "wrong") == 401
    assert status("2001:db8:1:2::b", "wrong") == 401
    assert status("2001:db8:1:2::c", "good") == 429  # the same /64: past its allowance
    assert status("2001:db8:1:3::c", "good") == 200  # the next network is someone else

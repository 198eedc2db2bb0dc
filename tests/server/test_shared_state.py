"""State shared through a real Redis (``server_state_url``): rate limits, failed
authentications, the penalty box and kept answers, seen alike by two apps."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from flask import Flask

from middleware.errors import ConfigError, RateLimited, StateUnavailable
from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.server import create_app
from middleware.server.answering.answer_store import new_answer_id
from middleware.server.connections.address_gate import AddressGate
from middleware.server.context import STATE_KEY
from middleware.server.guard import ApiKeys, PenaltyBox
from middleware.server.rate_limits import RequestLimits
from middleware.server.shared.kept_answers import SharedAnswerStore
from middleware.server.shared.redis_state import OUTAGE_SECONDS, SharedRedis
from middleware.server.shared.refusals import SharedRefusals
from middleware.server.state import ServiceState
from tests.conftest import free_port
from tests.redis_server import RedisServer
from tests.server.conftest import settings
from tests.waiting import until

KEY = {"Authorization": "Bearer shared-key"}


def shared(url: str, prefix: str = "test:") -> SharedRedis:
    return SharedRedis(url, prefix=prefix, timeout=0.5)


@pytest.fixture
def two_apps(
    sample_graph: LocalStore, redis_server: RedisServer
) -> Iterator[Callable[..., tuple[Flask, Flask]]]:
    """Two services (two hosts, as far as they can tell) sharing one Redis; closed after."""
    made: list[Flask] = []

    def start(**values: object) -> tuple[Flask, Flask]:
        for _ in range(2):
            configured = settings(
                server_state_url=redis_server.url,
                server_api_keys="shared-key",
                sparql_penalty=30,
                **values,
            )
            llm = ScriptedLLM(default="x")
            made.append(create_app(configured, llm=llm, graphs={"sample": sample_graph}))
        return made[-2], made[-1]

    yield start
    for app in made:
        app.config[STATE_KEY].close()


# -- kept answers ------------------------------------------------------------------------
def test_a_kept_answer_is_read_back_by_its_owner_alone(redis_server: RedisServer) -> None:
    store = SharedAnswerStore(shared(redis_server.url), ttl=3600, max_bytes=100_000)
    answer_id = new_answer_id()
    assert store.put(answer_id, "owner-a", {"answer": "Paris"})
    other_host = SharedAnswerStore(shared(redis_server.url), ttl=3600, max_bytes=100_000)
    assert other_host.get(answer_id, "owner-a") == {"answer": "Paris"}
    assert other_host.get(answer_id, "owner-b") is None
    assert other_host.get(new_answer_id(), "owner-a") is None
    assert other_host.get("not-an-id", "owner-a") is None


def test_a_lowered_ttl_hides_older_answers_at_once(redis_server: RedisServer) -> None:
    answer_id = new_answer_id()
    SharedAnswerStore(shared(redis_server.url), ttl=3600, max_bytes=10_000).put(
        answer_id, "o", {"a": 1}
    )
    time.sleep(0.01)
    lowered = SharedAnswerStore(shared(redis_server.url), ttl=0.005, max_bytes=10_000)
    assert lowered.get(answer_id, "o") is None


def test_the_answers_of_every_host_stay_within_the_cap(redis_server: RedisServer) -> None:
    body = {"text": '"/' * 450}  # characters a JSON text inside JSON would escape twice
    stores = [
        SharedAnswerStore(shared(redis_server.url), ttl=3600, max_bytes=5_000) for _ in range(4)
    ]
    written: list[str] = []
    lock = threading.Lock()

    def write(store: SharedAnswerStore) -> None:
        for _ in range(25):
            answer_id = new_answer_id()
            assert store.put(answer_id, "o", body)
            with lock:
                written.append(answer_id)

    threads = [threading.Thread(target=write, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    held = stores[0].ids()
    assert 0 < stores[0].size() <= 5_000
    assert set(held) <= set(written) and len(held) >= 3
    client = redis.Redis.from_url(redis_server.url)
    stored = sum(  # what Redis holds for them, counted as the store counts
        len(client.hget(f"test:answers:id:{answer_id}", "body") or b"") + len("o") + 64
        for answer_id in held
    )
    assert stored == stores[0].size()
    assert stores[1].put(new_answer_id(), "o", {"text": "y" * 6_000}) is False  # alone too big


def test_one_redis_serves_two_deployments_apart(redis_server: RedisServer) -> None:
    answer_id = new_answer_id()
    blue = SharedAnswerStore(shared(redis_server.url, "blue:"), ttl=60, max_bytes=10_000)
    green = SharedAnswerStore(shared(redis_server.url, "green:"), ttl=60, max_bytes=10_000)
    blue.put(answer_id, "o", {"a": 1})
    assert green.get(answer_id, "o") is None
    assert green.ids() == [] and blue.ids() == [answer_id]


# -- limits and penalties across two services ---------------------------------------------
def test_a_rate_limit_holds_across_both_services(
    two_apps: Callable[..., tuple[Flask, Flask]], redis_server: RedisServer
) -> None:
    first, second = two_apps(server_rate_limit=3)
    a, b = first.test_client(), second.test_client()
    statuses = [client.get("/v1/sources", headers=KEY).status_code for client in (a, b, a)]
    assert statuses == [200, 200, 200]
    for client in (a, b):
        refused = client.get("/v1/sources", headers=KEY)
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) >= 1


def test_failed_authentications_count_on_every_host(
    two_apps: Callable[..., tuple[Flask, Flask]], redis_server: RedisServer
) -> None:
    first, second = two_apps(server_auth_failures=2)
    wrong = {"Authorization": "Bearer wrong"}
    assert first.test_client().get("/v1/sources", headers=wrong).status_code == 401
    assert second.test_client().get("/v1/sources", headers=wrong).status_code == 401
    # the next attempt from this address is refused even with the right key, at either
    assert second.test_client().get("/v1/sources", headers=KEY).status_code == 429
    assert until(  # the host that counted the first failure learns within a second
        lambda: first.test_client().get("/v1/sources", headers=KEY).status_code == 429,
        seconds=5,
    )


def test_a_caller_penalised_at_one_service_is_held_at_the_other(
    two_apps: Callable[..., tuple[Flask, Flask]], redis_server: RedisServer
) -> None:
    first, second = two_apps()
    state_a: ServiceState = first.config[STATE_KEY]
    state_b: ServiceState = second.config[STATE_KEY]
    caller = ApiKeys.parse("shared-key").caller(KEY["Authorization"])
    state_a.penalties.punish(caller)
    with pytest.raises(RateLimited):
        state_a.penalties.check(caller)

    def held_at_b() -> bool:
        try:
            state_b.penalties.check(caller)
        except RateLimited:
            return True
        return False

    assert until(held_at_b)  # copied within a second
    refused = second.test_client().get("/sparql", query_string={"query": "ASK {}"}, headers=KEY)
    assert refused.status_code == 429
    state_b.penalties.check("key:sha256:0000000000000000")  # nobody else


def test_strikes_from_both_services_add_up(
    two_apps: Callable[..., tuple[Flask, Flask]], redis_server: RedisServer
) -> None:
    first, second = two_apps()
    boxes = [app.config[STATE_KEY].penalties for app in (first, second)]
    for box in (*boxes, *boxes):  # four strikes, two at each: past the three allowed
        box.strike("addr:10.0.0.7")
    with pytest.raises(RateLimited):
        boxes[1].check("addr:10.0.0.7")
    assert boxes[0].gate is not None
    assert until(lambda: boxes[0].gate.refused("10.0.0.7"))  # type: ignore[union-attr]


def two_limiters(url: str, per_minute: int) -> list[RequestLimits]:
    """The rate limits of two hosts sharing the Redis at ``url``."""
    return [
        RequestLimits(
            Flask(f"host-{n}"), per_minute=per_minute, auth_failures=0, shared=shared(url)
        )
        for n in range(2)
    ]


# -- outages --------------------------------------------------------------------------------
def test_without_redis_limited_routes_answer_503_and_recover(
    two_apps: Callable[..., tuple[Flask, Flask]], redis_server: RedisServer
) -> None:
    first, _ = two_apps(server_rate_limit=100)
    client = first.test_client()
    answer_id = new_answer_id()
    assert client.get("/v1/sources", headers=KEY).status_code == 200
    redis_server.stop()
    refused = client.get("/v1/sources", headers=KEY)
    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "5"
    assert "shared state" in refused.get_json()["message"]
    assert client.get(f"/v1/answers/{answer_id}", headers=KEY).status_code == 503
    fast = client.get("/sparql", query_string={"query": "ASK {}"}, headers=KEY)  # the fast path
    assert fast.status_code == 503 and fast.headers["Retry-After"] == "5"
    assert client.get("/healthz").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 503 and not ready.get_json()["checks"]["shared_state"]["ok"]
    redis_server.start()
    time.sleep(OUTAGE_SECONDS)
    assert until(lambda: client.get("/v1/sources", headers=KEY).status_code == 200)
    assert client.get(f"/v1/answers/{answer_id}", headers=KEY).status_code == 404


def test_local_limits_serve_while_redis_is_away_when_asked(
    two_apps: Callable[..., tuple[Flask, Flask]], redis_server: RedisServer
) -> None:
    first, _ = two_apps(server_rate_limit=2, server_state_outage="local")
    client = first.test_client()
    redis_server.stop()
    statuses = [client.get("/v1/sources", headers=KEY).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]  # this worker's own count, still a limit


def test_a_chat_answer_goes_out_unkept_while_redis_is_away(
    two_apps: Callable[..., tuple[Flask, Flask]], redis_server: RedisServer
) -> None:
    first, second = two_apps(server_state_outage="local")  # the auth-failure count too
    question = {
        "model": "kgmw-rok",
        "messages": [{"role": "user", "content": "Who directed Titanic?"}],
    }

    def ask() -> str:
        reply = first.test_client().post("/v1/chat/completions", json=question, headers=KEY)
        assert reply.status_code == 200, reply.get_json()
        content: str = reply.get_json()["choices"][0]["message"]["content"]
        return content

    kept = ask()
    assert "/v1/answers/" in kept
    answer_id = kept.split("/v1/answers/", 1)[1].split()[0].strip(").")
    assert second.test_client().get(f"/v1/answers/{answer_id}", headers=KEY).status_code == 200
    redis_server.stop()
    assert "/v1/answers/" not in ask()


# -- connecting -------------------------------------------------------------------------------
def test_a_password_and_tls_are_used_and_read_from_the_environment(tmp_path: Path) -> None:
    server = RedisServer(tmp_path, password="s3cret", tls=True)
    server.start()
    try:
        url = server.url.replace(":s3cret@", ":" + "{pw}" + "@")
        env = {"KGMW_TEST_REDIS": url.format(pw="s3cret")}
        configured = settings(server_state_url="env:KGMW_TEST_REDIS")
        found = SharedRedis.from_settings(configured, env)
        assert found is not None and found.url.startswith("rediss://")
        found.ping()
        assert "s3cret" not in found.where
        wrong = SharedRedis(url.format(pw="wrong"), prefix="t:", timeout=0.5)
        with pytest.raises(StateUnavailable) as refused:
            wrong.ping()
        assert "wrong" not in str(refused.value)
    finally:
        server.stop()


def test_a_url_that_is_not_redis_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="redis:// or rediss://"):
        SharedRedis("http://cache:6379", prefix="t:", timeout=0.5)
    with pytest.raises(ConfigError, match="KGMW_NOT_SET"):
        SharedRedis.from_settings(settings(server_state_url="env:KGMW_NOT_SET"), {})


def test_no_client_and_no_log_line_sees_the_password_or_where_redis_is(
    sample_graph: LocalStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = RedisServer(tmp_path, password="hunter2secret")
    server.start()
    url = server.url.replace(":hunter2secret@", "") + "?password=hunter2secret"
    app = create_app(
        settings(server_state_url=url, server_api_keys="k", server_rate_limit=10),
        llm=ScriptedLLM(default="x"),
        graphs={"sample": sample_graph},
    )
    try:
        client = app.test_client()
        assert client.get("/v1/sources", headers={"Authorization": "Bearer k"}).status_code == 200
        server.stop()
        shown = [
            client.get("/v1/sources", headers={"Authorization": "Bearer wrong"}).get_data(True),
            client.get("/readyz").get_data(True),
        ]
        for text in shown:
            assert "hunter2secret" not in text and str(server.port) not in text, text
        logged = caplog.text
        assert "hunter2secret" not in logged and f"127.0.0.1:{server.port}/0" in logged
    finally:
        app.config[STATE_KEY].close()
        server.stop()


@pytest.mark.parametrize(
    "url",
    [
        "redis://:Xy7/Qk+Zp9@127.0.0.1:6390/0",  # an unencoded / in the password
        "redis://:Xy7Qk@h:notaport/0",
        "redis://:Xy7Qk@h:1/0?socket_timeout=abc",
        "redis://:Xy7Qk@h/abc",
        "redis://",
        "redis://admin:2024#Xy7Qk@redis.internal:6380/0",  # the host would be 'admin'
        "redis://admin:8812?Xy7Qk@redis.internal:6380/0",
        "redis://127.0.0.1:6390/0?password=Xy7Qk&foo=bar",  # no such option
        "rediss://:Xy7Qk@127.0.0.1:6390/0?ssl_cert_reqs=bogus",
    ],
)
def test_a_url_redis_cannot_read_is_refused_naming_no_part_of_it(url: str) -> None:
    with pytest.raises(ConfigError) as refused:
        SharedRedis(url, prefix="t:", timeout=0.5)
    assert "Xy7" not in str(refused.value) and "admin" not in str(refused.value)
    assert refused.value.__cause__ is None


def test_an_outage_is_logged_once_and_its_end_once(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    client = shared(redis_server.url)
    client.call(client.client.ping, what="a test")
    redis_server.stop()
    deadline = time.monotonic() + 3 * OUTAGE_SECONDS
    while time.monotonic() < deadline:  # past the fast-fail second, more than once
        with pytest.raises(StateUnavailable):
            client.call(client.client.ping, what="a test")
        time.sleep(0.05)
    redis_server.start()
    assert until(lambda: _answers(client))
    lines = [r.getMessage() for r in caplog.records if "shared state" in r.getMessage()]
    assert [line.split(" (")[0].split(" reachable")[0] for line in lines] == [
        f"kgmw: shared state {client.where} unreachable",
        f"kgmw: shared state {client.where}",
    ]
    assert lines[1].endswith("reachable again")


def _answers(client: SharedRedis) -> bool:
    try:
        client.call(client.client.ping, what="a test")
    except StateUnavailable:
        return False
    return True


def test_a_busy_callers_requests_are_leased_and_the_shared_limit_still_holds(
    redis_server: RedisServer,
) -> None:
    per_minute = 3_000  # leases of up to 8 (one per 200 of the limit, at most 8)
    hosts = two_limiters(redis_server.url, per_minute)
    counter = redis.Redis.from_url(redis_server.url)

    def commands() -> int:  # calls from here: the scripts' own commands not counted
        return int(counter.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))

    served, refused = 0, [False, False]
    before, calls, paid = 0, 0, 0
    started = tick = time.monotonic()
    while not all(refused) and time.monotonic() < started + 30:
        if not before and time.monotonic() > started + 1.1:  # a second seen: leases now
            before, paid = commands(), served
        for n, host in enumerate(hosts):
            try:
                host.check("key:busy")
                served += 1
            except RateLimited:
                if not any(refused):  # Redis calls per request until the first refusal
                    calls, paid = commands() - before, served - paid
                refused[n] = True
        tick += 0.001  # 1,000 rounds a second: a limit of 3,000 lasts past a second
        time.sleep(max(0.0, tick - time.monotonic()))
    assert all(refused)
    assert per_minute - 2 * 7 <= served <= per_minute + 2 * 7  # at most 7 per host off
    assert 0 < calls < paid / 3  # most requests were paid for by a lease


def test_threads_of_one_process_share_a_lease_instead_of_throwing_it_away(
    redis_server: RedisServer,
) -> None:
    per_minute, threads = 1_600, 4  # leases of up to 8
    hosts = two_limiters(redis_server.url, per_minute)
    served = [0]
    lock = threading.Lock()
    stop = threading.Event()

    def client(host: RequestLimits) -> None:
        while not stop.is_set():
            try:
                host.check("key:busy")
            except RateLimited:
                stop.set()  # the first refusal anywhere: the limit is used up
                return
            with lock:
                served[0] += 1
            time.sleep(0.002)

    running = [
        threading.Thread(target=client, args=(host,)) for host in hosts for _ in range(threads)
    ]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(timeout=60)
    # nothing leased is thrown away: the first refusal comes when the limit is used up,
    # less what each host still holds (at most 7)
    assert per_minute - 2 * 7 <= served[0] <= per_minute + 2 * 7 + 2 * threads


def test_copying_many_refusals_applies_only_what_changed(redis_server: RedisServer) -> None:
    """Past 10,000 refused callers, a copy once rebuilt the local table per caller,
    every half second: seconds of CPU in every worker."""
    box = PenaltyBox(600, gate=AddressGate(slots=64))
    refusals = SharedRefusals(shared(redis_server.url), box.hold)
    pipe = redis.Redis.from_url(redis_server.url).pipeline()
    for n in range(15_000):
        pipe.zadd("test:refused", {f"key:many-{n}": time.time() + 600})
    pipe.execute()
    assert refusals.copy_once() == 15_000  # applied: all new
    assert refusals.copy_once() == 0  # the same refusals again: nothing to apply
    with pytest.raises(RateLimited):
        box.check("key:many-14999")


def test_a_full_penalty_table_is_pruned_at_most_once_a_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    box = PenaltyBox(600, clock=lambda: now[0])
    prunes = []
    monkeypatch.setattr(box, "_prune", lambda at: prunes.append(at))
    for n in range(15_000):
        box.hold(f"key:many-{n}", 600)
        box.strike(f"key:many-{n}")
    assert len(prunes) <= 2  # one for each table, not one per caller past 10,000


def test_a_readiness_probe_does_not_reopen_the_fast_fail_second() -> None:
    away = shared(f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(StateUnavailable):
        away.call(away.client.ping, what="a test")
    assert not away.reachable
    with pytest.raises(StateUnavailable):
        away.ping()
    assert not away.reachable  # every request still fails at once, no timeout waited

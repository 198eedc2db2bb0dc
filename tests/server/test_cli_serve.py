"""`kgmw serve`: the development server, and gunicorn with several workers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port, wait_until_up
from tests.server.prometheus_text import figure
from tests.waiting import PATIENCE


def _kgmw() -> list[str]:
    return [sys.executable, "-c", "import sys; from middleware.cli import main; sys.exit(main())"]


@pytest.fixture
def environment(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["KGMW_SERVER_API_KEYS"] = "serve-test-key"
    env["KGMW_PROGRESS"] = "false"
    return env


@contextmanager
def start(args: list[str], env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    for _ in range(3):
        port = free_port()
        process = subprocess.Popen(
            [*_kgmw(), "serve", "--port", str(port), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        if wait_until_up(f"{url}/healthz", process, seconds=60):
            try:
                yield url, process
            finally:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGTERM)
                    process.wait(timeout=30)
            return
        process.kill()
        process.wait()
    pytest.fail("kgmw serve did not come up")


def _check(url: str) -> None:
    headers = {"Authorization": "Bearer serve-test-key"}
    sources = httpx.get(f"{url}/v1/sources", headers=headers, timeout=PATIENCE).json()
    assert sources["default"] == "default"
    assert sources["sources"][0]["kind"] == "sample"
    query = {"query": "ASK { ?s ?p ?o }"}  # the first: it starts the query executors
    rows = httpx.get(f"{url}/sparql", params=query, headers=headers, timeout=PATIENCE).json()
    assert rows["boolean"] is True
    assert httpx.get(f"{url}/v1/sources").status_code == 401


@pytest.mark.slow
def test_serve_runs_the_development_server(environment: dict[str, str]) -> None:
    with start([], environment) as (url, process):
        _check(url)
        os.killpg(process.pid, signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        assert b"1 worker(s)" in err and b"API keys: on" in err


@pytest.mark.slow
def test_serve_with_workers_runs_gunicorn(environment: dict[str, str]) -> None:
    with start(["--workers", "2"], environment) as (url, process):
        _check(url)
        os.killpg(process.pid, signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        assert b"gunicorn" in err.lower() or b"Booting worker" in err
        assert err.count(b"Booting worker") == 2


def test_serve_warns_when_open_beyond_loopback() -> None:
    from click.testing import CliRunner

    from middleware.cli import cli
    from middleware.cli.serve import _announce
    from middleware.config import Settings

    settings = Settings.load(config_path=None, env={}, overrides={"server_host": "0.0.0.0"})
    runner = CliRunner()
    with runner.isolation() as (_, err, _):
        _announce(settings)
        assert b"without API keys" in err.getvalue()
    assert cli.get_command(None, "serve") is not None  # type: ignore[arg-type]


def test_serve_says_which_limits_are_per_worker_or_shared() -> None:
    from middleware.cli.serve import state_line
    from middleware.config import Settings

    def line(**values: object) -> str | None:
        return state_line(Settings.load(config_path=None, env={}, overrides=values))

    assert line() is None  # one worker, nothing shared to speak of
    per_worker = line(server_workers=4)
    assert per_worker is not None and "per worker" in per_worker and "4x" in per_worker
    shared = line(server_workers=4, server_state_url="redis://:pw@cache:6379/0")
    assert shared is not None and "redis://cache:6379/0" in shared and "pw" not in shared
    named = line(server_state_url="env:REDIS_URL")
    assert named is not None and "env:REDIS_URL" in named


def test_serve_beyond_loopback_runs_the_production_server() -> None:
    from middleware.cli.serve import _uses_gunicorn
    from middleware.config import Settings

    def uses(**values: object) -> bool:
        return _uses_gunicorn(Settings.load(config_path=None, env={}, overrides=values))

    assert not uses(server_host="127.0.0.1")
    assert not uses(server_host="localhost")
    assert uses(server_host="127.0.0.1", server_workers=2)
    assert uses(server_host="0.0.0.0")
    assert uses(server_host="192.168.1.5")


@pytest.mark.slow
def test_gunicorn_threads_each_take_their_own_connections(environment: dict[str, str]) -> None:
    """A connection that holds a thread (its request never completes) holds only that
    one: with 2 workers of 4 threads, 6 such connections leave room for a request,
    which is answered and its connection closed; a stop still ends the server."""
    with start(["--workers", "2"], environment) as (url, process):
        port = int(url.rsplit(":", 1)[1])
        silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
        try:
            for sock in silent:
                sock.sendall(b"GET /healthz HT")
            reply = httpx.get(f"{url}/healthz", timeout=PATIENCE)
            assert reply.status_code == 200
            assert reply.headers["connection"] == "close"
            query = {"query": "ASK { ?s ?p ?o }"}
            key = {"Authorization": "Bearer serve-test-key"}
            plain = httpx.get(f"{url}/sparql", params=query, headers=key, timeout=PATIENCE)
            assert plain.json() == {"head": {}, "boolean": True}
            assert plain.headers["server"] == "gunicorn"
            assert plain.headers["connection"] == "close"
        finally:
            for sock in silent:
                sock.close()
        os.killpg(process.pid, signal.SIGTERM)
        out, _ = process.communicate(timeout=30)
        assert b'"GET /sparql?query=ASK' in out and b" 200 " in out  # the access log


@pytest.mark.slow
def test_gunicorn_metrics_sum_every_workers_figures(
    environment: dict[str, str], tmp_path: Path
) -> None:
    """Each worker writes its figures to the multiprocess directory; a scrape answered
    by either worker reports the sum. Requests sent 32 at once keep the threads of the
    worker that takes connections first busy, so the other worker answers too."""
    figures = tmp_path / "metrics"
    figures.mkdir()
    (figures / "counter_1.db").write_bytes(b"left from an earlier run")
    environment["PROMETHEUS_MULTIPROC_DIR"] = str(figures)
    key = {"Authorization": "Bearer serve-test-key"}
    with start(["--workers", "2"], environment) as (url, process):
        port = int(url.rsplit(":", 1)[1])
        # the second worker may still be starting, and on a loaded machine one worker can
        # take every connection for a while: a generous deadline, left early when both count
        sent, deadline = 0, time.monotonic() + 3 * PATIENCE
        while time.monotonic() < deadline:
            sent += _at_once(port, b"GET /v1/sources HTTP/1.1\r\nHost: x\r\n", key, 32)
            if len({p.stem.split("_")[-1] for p in figures.glob("counter_*.db")}) >= 2:
                break
        workers = {p.stem.split("_")[-1] for p in figures.glob("counter_*.db")}
        assert len(workers) == 2 and "1" not in workers  # both workers; the old file gone
        scraped = httpx.get(f"{url}/metrics", headers=key).text
        counted = figure(
            scraped, "kgmw_http_requests_total", route="/v1/sources", method="GET", status="200"
        )
        assert counted == sent
        os.killpg(process.pid, signal.SIGTERM)
        process.communicate(timeout=30)


def _at_once(port: int, head: bytes, headers: dict[str, str], count: int) -> int:
    """Send ``count`` requests on as many connections before reading any answer; how
    many were answered 200."""
    lines = b"".join(f"{name}: {value}\r\n".encode() for name, value in headers.items())
    connections = [socket.create_connection(("127.0.0.1", port), 30) for _ in range(count)]
    for sock in connections:
        sock.sendall(head + lines + b"\r\n")
    answered = 0
    for sock in connections:
        with sock:
            reply = b"".join(iter(lambda s=sock: s.recv(65536), b""))
        answered += reply.startswith(b"HTTP/1.1 200 ")
    return answered


def _wait_until(check: Callable[[], bool], *, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def _workers(master: int) -> set[int]:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return {int(pid) for pid in children}


@pytest.mark.slow
def test_a_worker_that_ends_keeps_its_counts_and_the_others_figures(
    environment: dict[str, str],
) -> None:
    """A worker leaves through the master's stack (it is a fork): it must not remove the
    figures' directory, and what it counted stays in the sums."""
    environment.pop("PROMETHEUS_MULTIPROC_DIR", None)  # kgmw serve makes its own
    key = {"Authorization": "Bearer serve-test-key"}
    with start(["--workers", "2"], environment) as (url, process):
        for _ in range(6):
            assert httpx.get(f"{url}/v1/sources", headers=key).status_code == 200
        before = _workers(process.pid)
        assert len(before) == 2
        os.kill(min(before), signal.SIGTERM)
        assert _wait_until(lambda: len(_workers(process.pid) - before) == 1, seconds=PATIENCE)
        scraped = httpx.get(f"{url}/metrics", headers=key).text
        counted = figure(
            scraped, "kgmw_http_requests_total", route="/v1/sources", method="GET", status="200"
        )
        assert counted == 6
        os.killpg(process.pid, signal.SIGTERM)
        process.communicate(timeout=30)

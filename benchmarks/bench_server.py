"""Requests/s and latency of /v1/answer and /sparql under 1, 8 and 32 concurrent clients.

    ../.venv/bin/python bench_server.py [--seconds 10] [--workers 1 2]
    ../.venv/bin/python bench_server.py --shared [--seconds 10] [--rounds 3]

The service runs in its own process (serve_scripted.py: sample graph, scripted LLM) on
loopback; client threads here send requests back to back for a fixed time, each on its
own connection. Every non-200 answer or connection failure counts as an error.

``--shared`` compares, with 32 clients (each its own API key) and a rate limit on (too
high to refuse anyone, so every request is counted, and its key's failed
authentications looked up): one instance keeping its limits in memory, one
keeping them in Redis (``server_state_url``; a ``redis-server`` of its own on a free
port), and two instances sharing that Redis, the clients split between them. The
three run in turn, ``--rounds`` times, so a busy moment hits each alike.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

from common import free_port, percentile, save

HERE = Path(__file__).resolve().parent
ANSWER = json.dumps({"question": "Who directed Titanic?", "method": "rok"}).encode()
SPARQL = "SELECT ?p ?o WHERE { <https://kgmw.dev/metaqa/entity/Titanic> ?p ?o } LIMIT 100"
CLIENTS = (1, 8, 32)


def start_server(
    workers: int, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "serve_scripted.py"),
            "--port",
            str(port),
            "--workers",
            str(workers),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return process, port
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the service did not start")


def one_request(port: int, route: str, key: str | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    auth = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        if route == "/v1/answer":
            connection.request(
                "POST", route, body=ANSWER, headers={"Content-Type": "application/json", **auth}
            )
        else:
            connection.request(
                "GET",
                "/sparql?" + urlencode({"query": SPARQL}),
                headers={"Accept": "application/sparql-results+json", **auth},
            )
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def load(
    port: int | list[int], route: str, clients: int, seconds: float, *, keys: bool = False
) -> dict[str, float]:
    """``clients`` threads for ``seconds``; with several ports, client i uses port i mod n
    (and with ``keys``, API key ``bench-key-i``)."""
    ports = port if isinstance(port, list) else [port]
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(port: int, key: str | None) -> None:
        mine: list[float] = []
        failed = 0
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                ok = one_request(port, route, key) == 200
            except OSError:
                ok = False
            mine.append((time.perf_counter() - started) * 1000)
            failed += 0 if ok else 1
        with lock:
            latencies.extend(mine)
            errors[0] += failed

    threads = [
        threading.Thread(
            target=client, args=(ports[n % len(ports)], f"bench-key-{n}" if keys else None)
        )
        for n in range(clients)
    ]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    return {
        "clients": clients,
        "requests": len(latencies),
        "errors": errors[0],
        "rps": round(len(latencies) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p99_ms": round(percentile(latencies, 99), 1),
    }


RATE_LIMIT = 1_000_000  # a limit nobody reaches: every request is counted, none refused
SHARED_CLIENTS = 32


def start_redis(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A ``redis-server`` of this run on a free port, saving nothing."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("--shared needs redis-server (apt-get install redis-server)")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    return process, f"redis://127.0.0.1:{port}/0"


def shared_rows(seconds: float, rounds: int) -> list[dict[str, object]]:
    """Memory limits, Redis limits, and two instances sharing Redis, in turn."""
    folder = Path(tempfile.mkdtemp(prefix="kgmw-bench-redis-"))
    redis, url = start_redis(folder)
    keys = ",".join(f"bench-key-{n}" for n in range(SHARED_CLIENTS))
    memory = {"KGMW_SERVER_RATE_LIMIT": str(RATE_LIMIT), "KGMW_SERVER_API_KEYS": keys}
    shared = {**memory, "KGMW_SERVER_STATE_URL": url}
    setups = (
        ("1 instance, limits in memory", memory, 1),
        ("1 instance, limits in Redis", shared, 1),
    )
    setups += (("2 instances sharing Redis", shared, 2),)
    rows: list[dict[str, object]] = []
    try:
        for round_number in range(1, rounds + 1):
            for name, env, count in setups:
                started = [start_server(1, env) for _ in range(count)]
                ports = [port for _, port in started]
                try:
                    for route in ("/v1/answer", "/sparql"):
                        for port in ports:
                            one_request(port, route, "bench-key-0")  # warm: sources, methods
                        row = {
                            "setup": name,
                            "round": round_number,
                            "route": route,
                            **load(ports, route, SHARED_CLIENTS, seconds, keys=True),
                        }
                        rows.append(row)
                        print(json.dumps(row), flush=True)
                finally:
                    for process, _ in started:
                        process.terminate()
                        process.wait(timeout=30)
    finally:
        redis.terminate()
        redis.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--shared", action="store_true", help="limits in memory vs in Redis vs two instances"
    )
    parser.add_argument("--rounds", type=int, default=3, help="with --shared: runs of each")
    args = parser.parse_args()
    if args.shared:
        rows = shared_rows(args.seconds, args.rounds)
        print(f"saved {save('server_shared', {'seconds': args.seconds, 'rows': rows})}")
        return
    rows = []
    for workers in args.workers:
        process, port = start_server(workers)
        try:
            for route in ("/v1/answer", "/sparql"):
                one_request(port, route)  # warm: sources opened, methods built
                for clients in CLIENTS:
                    row = {
                        "workers": workers,
                        "route": route,
                        **load(port, route, clients, args.seconds),
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
        finally:
            process.terminate()
            process.wait(timeout=30)
    print(f"saved {save('server', {'seconds': args.seconds, 'rows': rows})}")


if __name__ == "__main__":
    main()

"""Requests/s and latency of /v1/answer and /sparql under 1, 8 and 32 concurrent clients.

    ../.venv/bin/python bench_server.py [--seconds 10] [--workers 1 2]

The service runs in its own process (serve_scripted.py: sample graph, scripted LLM) on
loopback; client threads here send requests back to back for a fixed time, each on its
own connection. Every non-200 answer or connection failure counts as an error.
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

from common import free_port, percentile, save

HERE = Path(__file__).resolve().parent
ANSWER = json.dumps({"question": "Who directed Titanic?", "method": "rok"}).encode()
SPARQL = "SELECT ?p ?o WHERE { <https://kgmw.dev/metaqa/entity/Titanic> ?p ?o } LIMIT 100"
CLIENTS = (1, 8, 32)


def start_server(workers: int) -> tuple[subprocess.Popen[bytes], int]:
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


def one_request(port: int, route: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        if route == "/v1/answer":
            connection.request(
                "POST", route, body=ANSWER, headers={"Content-Type": "application/json"}
            )
        else:
            connection.request(
                "GET",
                "/sparql?" + urlencode({"query": SPARQL}),
                headers={"Accept": "application/sparql-results+json"},
            )
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def load(port: int, route: str, clients: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client() -> None:
        mine: list[float] = []
        failed = 0
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                ok = one_request(port, route) == 200
            except OSError:
                ok = False
            mine.append((time.perf_counter() - started) * 1000)
            failed += 0 if ok else 1
        with lock:
            latencies.extend(mine)
            errors[0] += failed

    threads = [threading.Thread(target=client) for _ in range(clients)]
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
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

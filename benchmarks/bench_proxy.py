"""The /sparql proxy's cost beside Oxigraph's own server, over the same store.

    ../.venv/bin/python bench_proxy.py --store STORE_DIR [--requests 400] [--executors 2]
        [--rate-limit N] [--shared]

Both servers run in their own processes on loopback over the same on-disk store (the
proxy: `kgmw serve` with its query executors; Oxigraph: `oxigraph serve-read-only` on
the store's current generation). One client sends 1-hop SELECTs (JSON results, LIMIT
100), one connection per request, alternating between the servers. "new" texts name a
different entity each time, so no cache of either side has seen them; "repeated"
sends one text again and again. ``--rate-limit N`` turns the per-caller limit on (every
request counted); ``--shared`` keeps it in a ``redis-server`` of this run
(``server_state_url``).
"""

from __future__ import annotations

import argparse
import http.client
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

from common import free_port, percentile, save, start_kgmw_serve

from middleware.kg.backends.local import LocalStore

QUERY = "SELECT ?p ?o WHERE {{ <{entity}> ?p ?o }} LIMIT 100"
ACCEPT = "application/sparql-results+json"


def wait_for(port: int, path: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"server exited with {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", path, headers={"Accept": ACCEPT})
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"no server on port {port}")


def get(port: int, path: str, query: str) -> float:
    start = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", f"{path}?{urlencode({'query': query})}", headers={"Accept": ACCEPT})
    response = connection.getresponse()
    response.read()
    connection.close()
    if response.status != 200:
        raise SystemExit(f"{path} answered {response.status}")
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--executors", type=int, default=2)
    parser.add_argument(
        "--workers", type=int, default=1, help="1: the development server; more: gunicorn"
    )
    parser.add_argument("--rate-limit", type=int, default=0, help="server_rate_limit (0: off)")
    parser.add_argument("--shared", action="store_true", help="limits in Redis (server_state_url)")
    args = parser.parse_args()
    store = LocalStore(args.store, read_only=True)
    entities = [
        row["s"].value
        for row in store._run(f"SELECT DISTINCT ?s WHERE {{ ?s ?p ?o }} LIMIT {args.requests}").rows
    ]
    generation = Path(args.store) / os.readlink(Path(args.store) / "current")
    store.close()

    proxy_port, raw_port = free_port(), free_port()
    env = {"KGMW_SPARQL_EXECUTORS": str(args.executors)}
    env["KGMW_SERVER_RATE_LIMIT"] = str(args.rate_limit)
    redis = None
    if args.shared:
        redis_port = free_port()
        redis = subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--save", "", "--dir", "/tmp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        env["KGMW_SERVER_STATE_URL"] = f"redis://127.0.0.1:{redis_port}/0"
    proxy = start_kgmw_serve(args.store, proxy_port, workers=args.workers, env=env)
    oxigraph = Path(sys.executable).parent / "oxigraph"
    raw = subprocess.Popen(
        [
            str(oxigraph),
            "serve-read-only",
            "--location",
            str(generation),
            "--bind",
            f"127.0.0.1:{raw_port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(proxy_port, "/sparql?query=ASK%7B%7D", proxy)
        wait_for(raw_port, "/query?query=ASK%7B%7D", raw)
        for entity in entities[:20]:  # warm both: page cache, executors, connections
            get(proxy_port, "/sparql", QUERY.format(entity=entity))
            get(raw_port, "/query", QUERY.format(entity=entity))
        rows = {}
        for label, texts in (
            ("new", [QUERY.format(entity=e) for e in entities]),
            ("repeated", [QUERY.format(entity=entities[0])] * len(entities)),
        ):
            proxy_ms, raw_ms = [], []
            for text in texts:
                proxy_ms.append(get(proxy_port, "/sparql", text))
                raw_ms.append(get(raw_port, "/query", text))
            rows[label] = {
                "proxy_p50": percentile(proxy_ms, 50),
                "proxy_p95": percentile(proxy_ms, 95),
                "raw_p50": percentile(raw_ms, 50),
                "raw_p95": percentile(raw_ms, 95),
                "ratio_p50": percentile(proxy_ms, 50) / percentile(raw_ms, 50),
            }
            print(label, {k: round(v, 2) for k, v in rows[label].items()}, flush=True)
        setup = {"rate_limit": args.rate_limit, "shared": args.shared, "workers": args.workers}
        save("proxy", {"store": args.store, "requests": len(entities), **setup, "rows": rows})
    finally:
        proxy.terminate()
        raw.terminate()
        proxy.wait(10)
        raw.wait(10)
        if redis is not None:
            redis.terminate()
            redis.wait(10)


if __name__ == "__main__":
    main()

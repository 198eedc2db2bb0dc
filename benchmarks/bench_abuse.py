"""A benign query stream beside 8 abusive clients, against `kgmw serve` on one store.

    ../.venv/bin/python bench_abuse.py --store STORE_DIR [--seconds 20] [--benign 2]

The service runs in its own process (`kgmw serve --store STORE`, 5 s query timeout).
First the benign clients alone (from 127.0.0.1) send 1-hop SELECTs on random entities,
back to back, one connection per request, for ``--seconds``. Then the same again while
8 abusive clients, bound to 127.0.0.2-9, send the crash and runaway corpus back to
back: deep nesting, path alternatives, `+` chains, many UNIONs, a cartesian ORDER BY,
a catastrophic regex over every literal, a COUNT over a triple cross product. Reported:
benign requests/s, p50 and p99, errors; each abusive answer's status; the peak resident
memory of the service and its executors together (sampled every 0.1 s from /proc).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

from common import free_port, percentile, save

from middleware.kg.backends.local import LocalStore

ABUSE = [
    "SELECT * WHERE " + "{" * 5000 + "}" * 5000,
    "SELECT * WHERE { ?s " + "|".join(["<http://e/p>"] * 6000) + " ?o }",
    "SELECT (" + "+".join(["1"] * 10000) + " AS ?x) {}",
    "SELECT * WHERE { " + " UNION ".join(["{?s ?p ?o}"] * 5000) + " }",
    "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?a ?d ?g",
    'SELECT * WHERE { ?s ?p ?o FILTER(REGEX(STR(?o), "^(a|a?)+$")) }',
    "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
]
QUERY = "SELECT ?p ?o WHERE {{ <{entity}> ?p ?o }} LIMIT 100"
ACCEPT = "application/sparql-results+json"


def request(port: int, query: str, source: str = "127.0.0.1") -> int:
    connection = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=120, source_address=(source, 0)
    )
    body = urlencode({"query": query})
    connection.request(
        "POST",
        "/sparql",
        body=body,
        headers={"Accept": ACCEPT, "Content-Type": "application/x-www-form-urlencoded"},
    )
    response = connection.getresponse()
    response.read()
    connection.close()
    return response.status


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * 4096
        todo += children.get(current, [])
    return total


def benign_phase(port: int, entities: list[str], clients: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    errors = Counter[int]()
    stop = time.monotonic() + seconds
    lock = threading.Lock()

    def client(seed: int) -> None:
        pick = random.Random(seed)
        while time.monotonic() < stop:
            start = time.perf_counter()
            try:
                status = request(port, QUERY.format(entity=pick.choice(entities)))
            except OSError:
                status = -1
            with lock:
                if status == 200:
                    latencies.append((time.perf_counter() - start) * 1000)
                else:
                    errors[status] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {
        "requests_per_s": round(len(latencies) / seconds, 1),
        "p50_ms": round(percentile(latencies, 50), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "errors": sum(errors.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--benign", type=int, default=2)
    args = parser.parse_args()
    store = LocalStore(args.store, read_only=True)
    entities = [r["s"].value for r in store._run("SELECT DISTINCT ?s { ?s ?p ?o } LIMIT 5000").rows]
    store.close()

    port = free_port()
    env = {**os.environ, "KGMW_TIMEOUT": "5"}
    kgmw = Path(sys.executable).parent / "kgmw"
    server = subprocess.Popen(
        [str(kgmw), "serve", "--store", args.store, "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(server.pid))
            time.sleep(0.1)

    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if request(port, "ASK {}") == 200:
                    break
            except OSError:
                time.sleep(0.3)
        for entity in entities[:50]:
            request(port, QUERY.format(entity=entity))
        threading.Thread(target=sample, daemon=True).start()
        alone = benign_phase(port, entities, args.benign, args.seconds)
        peak_alone = peak[0]
        print("alone", alone, f"peak RSS {peak_alone / 2**20:.0f} MB", flush=True)

        abuse_status: Counter[str] = Counter()
        stop_abuse = threading.Event()

        def abuser(number: int) -> None:
            source = f"127.0.0.{number + 2}"
            turn = number
            while not stop_abuse.is_set():
                query = ABUSE[turn % len(ABUSE)]
                turn += 1
                try:
                    status = str(request(port, query, source))
                except OSError as err:
                    status = type(err).__name__
                abuse_status[status] += 1

        abusers = [threading.Thread(target=abuser, args=(n,)) for n in range(8)]
        for thread in abusers:
            thread.start()
        time.sleep(1.0)
        under = benign_phase(port, entities, args.benign, args.seconds)
        stop_abuse.set()
        for thread in abusers:
            thread.join()
        done.set()
        alive = server.poll() is None and request(port, "ASK {}") == 200
        ratio = under["requests_per_s"] / alone["requests_per_s"]
        print("under abuse", under, f"ratio {ratio:.2f}", flush=True)
        print("abusive answers", dict(abuse_status), "service up:", alive, flush=True)
        print(f"peak RSS of service and executors: {peak[0] / 2**20:.0f} MB", flush=True)
        save(
            "abuse",
            {
                "store": args.store,
                "seconds": args.seconds,
                "benign_clients": args.benign,
                "alone": alone,
                "under_abuse": under,
                "throughput_ratio": round(ratio, 3),
                "abusive_answers": dict(abuse_status),
                "service_up": alive,
                "peak_rss_mb": round(peak[0] / 2**20),
            },
        )
    finally:
        done.set()
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()

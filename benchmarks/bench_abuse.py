"""A benign query stream beside 8 abusive clients, or beside 256 idle and slow sockets,
against `kgmw serve` on one store.

    ../.venv/bin/python bench_abuse.py --store STORE_DIR [--rounds 10] [--seconds 2]
        [--benign 2] [--workers 1] [--abuser-nice 19] [--control] [--sockets 256]

The service runs in its own process (`kgmw serve --store STORE`, 5 s query timeout).
Each round: the benign clients (from 127.0.0.1) send 1-hop SELECTs on random entities,
back to back, one connection per request, for ``--seconds`` alone; then as long again
while 8 abusive clients, bound to 127.0.0.2-9, send the crash and runaway corpus back
to back: deep nesting, path alternatives, `+` chains, many UNIONs, a cartesian ORDER
BY, a catastrophic regex over every literal, a COUNT over a triple cross product.
Short paired rounds, because this machine's speed drifts by 2-3× over seconds;
``--control`` runs the same with abusers that send nothing, to show that drift.
Reported: benign requests/s, p50 and p99, errors, per round and in all; the ratio per
round; each abusive answer's status; the peak resident memory of the service and its
executors together (sampled every 0.1 s from /proc).

``--newcomers N`` measures something else: N new callers, each with an API key of its
own used once, send a short query every quarter second, first with nobody else
there, then beside two runaway clients, each sending a COUNT over a triple cross
product again as soon as the last one ended, each time with a fresh key (so the
penalty box, which holds a key whose query ran to its timeout, never stops them).
Reported: the newcomers' p50, p95 and slowest wait in each phase, their statuses, and
the runaways' statuses.

``--sockets N`` replaces the query corpus with N sockets that hold connections open
without a whole request (a slowloris): a third idle, a third with half a request head,
a third sending a declared 9,000-byte body 16 bytes every half second; one the service
closes is opened again. Beside both phases a probe asks `/healthz` every 20 ms; its
p99 is reported per phase, with how many of the sockets the service closed.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import multiprocessing
import os
import random
import select
import socket
import statistics
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from common import free_port, percentile, save, start_kgmw_serve

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


def request(port: int, query: str, source: str = "127.0.0.1", key: str | None = None) -> int:
    connection = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=120, source_address=(source, 0)
    )
    body = urlencode({"query": query})
    headers = {"Accept": ACCEPT, "Content-Type": "application/x-www-form-urlencoded"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    connection.request("POST", "/sparql", body=body, headers=headers)
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


def abuse(port: int, active: Any, stop: Any, answers: Any, nice: int, idle: bool) -> None:
    """8 abusive clients, threads of one process apart from the benign clients' (so
    they do not take turns on one interpreter lock), each from its own address, sending
    while ``active`` is set. At ``nice`` 19 they stand for machines of their own: what
    they burn to build their requests is not taken from the service or the benign
    clients on these 2 cores. ``idle`` (the control run) sends nothing."""
    os.nice(nice)
    statuses: Counter[str] = Counter()

    def abuser(number: int) -> None:
        source = f"127.0.0.{number + 2}"
        turn = number
        while not stop.is_set():
            if not active.wait(0.1):
                continue
            if idle:
                time.sleep(0.1)
                continue
            query = ABUSE[turn % len(ABUSE)]
            turn += 1
            try:
                status = str(request(port, query, source))
            except (OSError, http.client.HTTPException) as err:
                status = type(err).__name__
            statuses[status] += 1

    threads = [threading.Thread(target=abuser, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    answers.put(dict(statuses))


SLOW_HEADS = (
    b"",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nAccept: ",
    b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n"
    b"Content-Length: 9000\r\n\r\nSELECT",
)


def slow_sockets(
    port: int, active: Any, stop: Any, answers: Any, nice: int, count: int, idle: bool
) -> None:
    """``count`` connections held open while ``active`` is set, none with a whole
    request: idle ones, half heads, and bodies that trickle; one the service closes is
    opened again (and counted). ``idle`` (the control run) opens none."""
    os.nice(nice)
    held: dict[socket.socket, int] = {}
    closed: Counter[str] = Counter()
    last_drip = 0.0
    while not stop.is_set():
        if not active.wait(0.1) or idle:
            for sock in held:
                sock.close()
            held.clear()
            continue
        while len(held) < count:
            kind = len(held) % len(SLOW_HEADS)
            try:
                sock = socket.create_connection(("127.0.0.1", port), 5)
                sock.sendall(SLOW_HEADS[kind])
            except OSError as err:
                closed[f"open failed: {type(err).__name__}"] += 1
                break
            held[sock] = kind
        readable, _, _ = select.select(list(held), [], [], 0.05)
        for sock in readable:  # an answer (408) or a close: the service let it go
            try:
                said = sock.recv(64)
            except OSError:
                said = b""
            closed[said.split(b"\r\n", 1)[0].decode("latin-1") or "closed"] += 1
            sock.close()
            del held[sock]
        if time.monotonic() - last_drip >= 0.5:
            last_drip = time.monotonic()
            for sock, kind in list(held.items()):
                if kind == 2:
                    with contextlib.suppress(OSError):
                        sock.send(b" " * 16, socket.MSG_DONTWAIT)
    for sock in held:
        sock.close()
    answers.put(dict(closed))


def measured(port: int, entities: list[str], args: argparse.Namespace) -> Phase:
    """One benign phase (with the /healthz probe beside it when sockets are held)."""
    if not args.sockets:
        return benign_phase(port, entities, args.benign, args.seconds)
    probe: list[float] = []
    done = threading.Event()
    prober = threading.Thread(target=probe_health, args=(port, probe, done))
    prober.start()
    phase = benign_phase(port, entities, args.benign, args.seconds)
    done.set()
    prober.join()
    phase.health = probe
    return phase


def probe_health(port: int, latencies: list[float], done: threading.Event) -> None:
    """GET /healthz every 20 ms until ``done``; milliseconds of each (a failure: 60 s)."""
    while not done.wait(0.02):
        start = time.perf_counter()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            connection.request("GET", "/healthz")
            ok = connection.getresponse().read() is not None
            connection.close()
        except (OSError, http.client.HTTPException):
            ok = False
        latencies.append((time.perf_counter() - start) * 1000 if ok else 60_000.0)


def benign_phase(port: int, entities: list[str], clients: int, seconds: float) -> Phase:
    """``clients`` benign clients back to back for ``seconds``."""
    phase = Phase(seconds)
    stop = time.monotonic() + seconds
    lock = threading.Lock()

    def client(seed: int) -> None:
        pick = random.Random(seed)
        while time.monotonic() < stop:
            start = time.perf_counter()
            try:
                status: int | str = request(port, QUERY.format(entity=pick.choice(entities)))
            except OSError as err:
                status = type(err).__name__
            with lock:
                if status == 200:
                    phase.latencies.append((time.perf_counter() - start) * 1000)
                else:
                    phase.errors += 1
                    phase.failures[str(status)] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return phase


class Phase:
    """The benign answers of one or more phases."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds
        self.latencies: list[float] = []
        self.errors = 0
        self.failures: Counter[str] = Counter()  # the errors by status or exception
        self.health: list[float] = []  # /healthz, when probed

    def add(self, other: Phase) -> None:
        self.seconds += other.seconds
        self.latencies += other.latencies
        self.errors += other.errors
        self.failures += other.failures
        self.health += other.health

    def summary(self) -> dict[str, Any]:
        figures: dict[str, Any] = {
            "requests_per_s": round(len(self.latencies) / self.seconds, 1),
            "p50_ms": round(percentile(self.latencies, 50), 2),
            "p99_ms": round(percentile(self.latencies, 99), 2),
            "errors": self.errors,
        }
        if self.failures:
            figures["failures"] = dict(self.failures)
        if self.health:
            figures["healthz_p50_ms"] = round(percentile(self.health, 50), 2)
            figures["healthz_p99_ms"] = round(percentile(self.health, 99), 2)
        return figures


RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
SHORT = "ASK { ?s ?p ?o }"


def newcomers(store: str, count: int, workers: int) -> None:
    """New callers' short queries, alone and beside two keys' runaways."""
    keys = [f"newcomer-{n}" for n in range(2 * count)]
    runaway_keys = [f"runaway-{n}" for n in range(20 * count)]
    port = free_port()
    env = {"KGMW_TIMEOUT": "5", "KGMW_SERVER_API_KEYS": ",".join([*runaway_keys, *keys])}
    server = start_kgmw_serve(store, port, workers=workers, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, http.client.HTTPException):
                if request(port, "ASK {}", key=keys[0]) == 200:
                    break
            time.sleep(0.3)
        results = {}
        for phase, runaways in (("alone", False), ("beside two runaways", True)):
            stop = threading.Event()
            runaway_statuses: Counter[str] = Counter()

            def run_away(
                first: int,
                stop: threading.Event = stop,
                runaway_statuses: Counter[str] = runaway_statuses,
            ) -> None:
                turn = first
                while not stop.is_set():
                    key = runaway_keys[turn % len(runaway_keys)]
                    turn += 2
                    try:
                        runaway_statuses[str(request(port, RUNAWAY, key=key))] += 1
                    except (OSError, http.client.HTTPException) as err:
                        runaway_statuses[type(err).__name__] += 1

            threads = [
                threading.Thread(target=run_away, args=(first,))
                for first in ((0, 1) if runaways else ())
            ]
            for thread in threads:
                thread.start()
            time.sleep(1.0 if runaways else 0.0)  # the runaways are under way
            waits: list[float] = []
            statuses: Counter[str] = Counter()
            mine = keys[:count] if not runaways else keys[count:]
            for key in mine:
                began = time.perf_counter()
                try:
                    statuses[str(request(port, SHORT, key=key))] += 1
                except (OSError, http.client.HTTPException) as err:
                    statuses[type(err).__name__] += 1
                waits.append((time.perf_counter() - began) * 1000)
                time.sleep(0.25)
            stop.set()
            for thread in threads:
                thread.join(30)
            results[phase] = {
                "newcomers": len(waits),
                "p50_ms": round(percentile(waits, 50), 1),
                "p95_ms": round(percentile(waits, 95), 1),
                "max_ms": round(max(waits), 1),
                "statuses": dict(statuses),
                "runaway_statuses": dict(runaway_statuses),
            }
            print(phase, results[phase], flush=True)
        save("abuse_newcomers", {"store": store, "workers": workers, **results})
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds of each phase")
    parser.add_argument("--rounds", type=int, default=10, help="alone, then beside the abuse")
    parser.add_argument(
        "--control", action="store_true", help="abusers send nothing: the machine's own noise"
    )
    parser.add_argument("--benign", type=int, default=2)
    parser.add_argument(
        "--abuser-nice", type=int, default=19, help="0: the abusers compete for the CPU"
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="1: the development server; more: gunicorn"
    )
    parser.add_argument(
        "--sockets", type=int, default=0, help="N idle and slow sockets instead of the queries"
    )
    parser.add_argument(
        "--newcomers", type=int, default=0, help="N new callers beside two runaways instead"
    )
    args = parser.parse_args()
    if args.newcomers:
        newcomers(args.store, args.newcomers, args.workers)
        return
    store = LocalStore(args.store, read_only=True)
    entities = [r["s"].value for r in store._run("SELECT DISTINCT ?s { ?s ?p ?o } LIMIT 5000").rows]
    store.close()

    port = free_port()
    server = start_kgmw_serve(args.store, port, workers=args.workers, env={"KGMW_TIMEOUT": "5"})
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
            except (OSError, http.client.HTTPException):  # not up yet
                time.sleep(0.3)
        for entity in entities[:50]:
            request(port, QUERY.format(entity=entity))
        threading.Thread(target=sample, daemon=True).start()
        alone, under, pairs = Phase(), Phase(), []
        active, stop_abuse = multiprocessing.Event(), multiprocessing.Event()
        answers: multiprocessing.SimpleQueue[dict[str, int]] = multiprocessing.SimpleQueue()
        abusers = multiprocessing.Process(
            target=slow_sockets if args.sockets else abuse,
            args=(port, active, stop_abuse, answers, args.abuser_nice)
            + ((args.sockets,) if args.sockets else ())
            + (args.control,),
        )
        abusers.start()
        for round_number in range(1, args.rounds + 1):
            quiet = measured(port, entities, args)
            active.set()
            loud = measured(port, entities, args)
            active.clear()
            pairs.append(len(loud.latencies) / max(1, len(quiet.latencies)))
            print(f"round {round_number}: alone", quiet.summary(), "beside", loud.summary())
            alone.add(quiet)
            under.add(loud)
        stop_abuse.set()
        abuse_status = answers.get()
        abusers.join()
        done.set()
        alive = server.poll() is None and request(port, "ASK {}") == 200
        ratio = len(under.latencies) / max(1, len(alone.latencies))
        print("alone", alone.summary(), flush=True)
        print("beside the abuse", under.summary(), f"ratio {ratio:.2f}", flush=True)
        print(
            f"ratio per round: {[round(r, 2) for r in pairs]}, median "
            f"{statistics.median(pairs):.2f}; after round 1: "
            f"{statistics.median(pairs[1:] or pairs):.2f}",
            flush=True,
        )
        label = "sockets let go" if args.sockets else "abusive answers"
        print(label, dict(abuse_status), "service up:", alive, flush=True)
        print(f"peak RSS of service and executors: {peak[0] / 2**20:.0f} MB", flush=True)
        save(
            "abuse",
            {
                "store": args.store,
                "seconds": args.seconds,
                "benign_clients": args.benign,
                "workers": args.workers,
                "abuser_nice": args.abuser_nice,
                "sockets": args.sockets,
                "rounds": args.rounds,
                "alone": alone.summary(),
                "under_abuse": under.summary(),
                "throughput_ratio": round(ratio, 3),
                "ratio_per_round": [round(r, 3) for r in pairs],
                "control": args.control,
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

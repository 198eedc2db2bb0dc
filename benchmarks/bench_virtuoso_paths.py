"""paths() on Virtuoso beside an Oxigraph server, both over the full MetaQA KB.

    python benchmarks/bench_virtuoso_paths.py [--kb PATH] [--pairs 50]

The same KB (as N-Triples) is bulk-loaded into a Virtuoso started like the test fixture
(tests/virtuoso_server.py, no row cap or time limit in the way) and into a read-only
Oxigraph server. For seeded entity pairs joined by a random walk of 1, 2 and 3 steps (endpoints of
degree at most 300, then 3 steps with hubs allowed as endpoints),
``SparqlEndpoint.paths`` runs on both (same templates, over HTTP): latency per hop count,
the path sets compared, and every error counted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import DATASETS, free_port, save, summary
from pyoxigraph import DefaultGraph, NamedNode, RdfFormat

from middleware.errors import MiddlewareError
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from tests.kg.bruteforce import path_key, relation_graph, sample_pairs
from tests.virtuoso_server import start_virtuoso

GROUPS = (("1_hop", 1, 300), ("2_hop", 2, 300), ("3_hop", 3, 300), ("3_hop_hubs", 3, 10**9))


def start_oxigraph(data: Path, folder: Path) -> tuple[str, subprocess.Popen[bytes]]:
    binary = str(Path(sys.executable).parent / "oxigraph")
    location = folder / "oxigraph"
    subprocess.run(
        [binary, "load", "--location", str(location), "--file", str(data)],
        check=True,
        capture_output=True,
    )
    port = free_port()
    process = subprocess.Popen(
        [binary, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(2)
    return f"http://127.0.0.1:{port}/query", process


def timed_paths(
    graph: SparqlEndpoint, a: str, b: str, hops: int
) -> tuple[float, set[object] | str]:
    started = time.perf_counter()
    try:
        found = graph.paths(NamedNode(a[1:-1]), NamedNode(b[1:-1]), max_hops=hops, limit=1000)
    except MiddlewareError as err:
        return (time.perf_counter() - started) * 1000, f"{type(err).__name__}: {err.message}"
    return (time.perf_counter() - started) * 1000, {path_key(p) for p in found}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=Path, default=DATASETS / "metaqa" / "kb.txt")
    parser.add_argument("--pairs", type=int, default=50)
    args = parser.parse_args()
    store = LocalStore(profile="metaqa")
    store.load([args.kb])
    skipped = {str(p) for p in store.profile.skipped_predicates}
    relations = relation_graph(
        (str(q.subject), str(q.predicate), str(q.object))
        for q in store._store
        if str(q.predicate) not in skipped
    )
    results: dict[str, object] = {"kb": str(args.kb), "pairs_per_hop": args.pairs}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        triples = folder / "kb.nt"
        store._store.dump(str(triples), RdfFormat.N_TRIPLES, from_graph=DefaultGraph())
        started = time.perf_counter()
        virtuoso = start_virtuoso(
            [triples],
            folder / "virtuoso",
            free_port,
            row_cap=1_000_000,
            time_limit=0,
            buffers=100_000,
        )
        results["virtuoso_load_s"] = round(time.perf_counter() - started, 1)
        oxigraph_url, oxigraph = start_oxigraph(triples, folder)
        graphs = {
            "virtuoso": SparqlEndpoint(virtuoso.url, profile="metaqa", timeout=120),
            "oxigraph": SparqlEndpoint(oxigraph_url, profile="metaqa", timeout=120),
        }
        try:
            # the last group lets hubs (genres, years, languages) be the endpoints too
            for label, hops, max_degree in GROUPS:
                pairs = sample_pairs(
                    relations, args.pairs, hops, seed=200 + hops, max_degree=max_degree
                )
                ms: dict[str, list[float]] = {name: [] for name in graphs}
                errors: dict[str, list[str]] = {name: [] for name in graphs}
                mismatches = 0
                for a, b in pairs:
                    found = {}
                    for name, graph in graphs.items():
                        elapsed, paths = timed_paths(graph, a, b, hops)
                        found[name] = paths
                        if isinstance(paths, str):
                            errors[name].append(paths)
                        else:
                            ms[name].append(elapsed)
                    if found["virtuoso"] != found["oxigraph"]:
                        mismatches += 1
                results[label] = {
                    "mismatches": mismatches,
                    **{f"{name}_ms": summary(ms[name]) for name in graphs},
                    **{f"{name}_errors": errors[name][:5] for name in graphs},
                    **{f"{name}_error_count": len(errors[name]) for name in graphs},
                }
                line = ", ".join(
                    f"{name} p50 {summary(ms[name])['p50_ms']} p95 {summary(ms[name])['p95_ms']}"
                    f" ms ({len(errors[name])} errors)"
                    for name in graphs
                )
                print(f"{label}, {len(pairs)} pairs: {line}; {mismatches} mismatches")
        finally:
            virtuoso.stop()
            oxigraph.terminate()
            oxigraph.wait(timeout=10)
    print(f"saved {save('virtuoso_paths', results)}")


if __name__ == "__main__":
    main()

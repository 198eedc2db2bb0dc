"""paths() against brute-force networkx enumeration on the full MetaQA KB.

    python benchmarks/bench_paths_full.py [--kb PATH] [--pairs 100]

For 100 seeded pairs at each of 1, 2 and 3 hops, the path set from SPARQL must equal
the set networkx enumerates. Prints the mismatches (goal: none).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from common import DATASETS, save
from pyoxigraph import NamedNode

from middleware.kg.backends.local import LocalStore
from tests.kg.bruteforce import brute_force_paths, path_key, relation_graph, sample_pairs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=Path, default=DATASETS / "metaqa" / "kb.txt")
    parser.add_argument("--pairs", type=int, default=100)
    args = parser.parse_args()
    store = LocalStore(profile="metaqa")
    store.load([args.kb])
    skipped = {str(p) for p in store.profile.skipped_predicates}
    graph = relation_graph(
        (str(q.subject), str(q.predicate), str(q.object))
        for q in store._store
        if str(q.predicate) not in skipped
    )
    results: dict[str, object] = {"kb": str(args.kb), "pairs_per_hop": args.pairs}
    for hops in (1, 2, 3):
        started = time.perf_counter()
        mismatches, paths = 0, 0
        for a, b in sample_pairs(graph, args.pairs, hops, seed=100 + hops):
            expected = set().union(*(brute_force_paths(graph, a, b, n) for n in range(1, hops + 1)))
            got = {
                path_key(p)
                for p in store.paths(
                    NamedNode(a[1:-1]), NamedNode(b[1:-1]), max_hops=hops, limit=10_000
                )
            }
            paths += len(expected)
            if got != expected:
                mismatches += 1
                print(f"MISMATCH {hops} hops {a} {b}: {len(got)} vs {len(expected)}")
        results[f"{hops}_hop"] = {
            "mismatches": mismatches,
            "paths_compared": paths,
            "seconds": round(time.perf_counter() - started, 1),
        }
        print(f"{hops}-hop: {args.pairs} pairs, {paths} paths, {mismatches} mismatches")
    print(f"saved {save('paths_full', results)}")


if __name__ == "__main__":
    main()

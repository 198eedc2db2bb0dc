"""Load speed and query latency on the full MetaQA KB: pyoxigraph (LocalStore) vs rdflib.

    python benchmarks/bench_kg.py [--kb PATH] [--pairs 200] [--rdflib-pairs 30]

Same templates, same pairs, same answers; only the engine differs.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import rdflib
from common import DATASETS, latency, save, summary
from pyoxigraph import NamedNode

from middleware.kg.backends.local import LocalStore
from middleware.kg.backends.rdflib_graph import RdflibGraph
from middleware.kg.operations import GraphOperations
from tests.kg.bruteforce import relation_graph, sample_pairs


def measure(
    graph: GraphOperations, entities: list[str], pairs: dict[int, list[tuple[str, str]]]
) -> dict[str, object]:
    out: dict[str, object] = {}
    out["neighbors"] = summary(
        [latency(lambda e=e: graph.neighbors(e, limit=100)) for e in entities]
    )
    for hops, chosen in pairs.items():
        out[f"paths_{hops}hop"] = summary(
            [
                latency(lambda a=a, b=b, h=hops: graph.paths(a, b, max_hops=h, limit=100))
                for a, b in chosen
            ]
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=Path, default=DATASETS / "metaqa" / "kb.txt")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--rdflib-pairs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    results: dict[str, object] = {"kb": str(args.kb)}
    with tempfile.TemporaryDirectory() as folder:
        disk = LocalStore(Path(folder) / "store", profile="metaqa")
        report = disk.load([args.kb])
        results["load_disk"] = {
            "triples": report.quads_read,
            "seconds": round(report.seconds, 2),
            "triples_per_s": round(report.rate),
        }
        memory = LocalStore(profile="metaqa")
        report = memory.load([args.kb])
        results["load_memory"] = {
            "triples": report.quads_read,
            "seconds": round(report.seconds, 2),
            "triples_per_s": round(report.rate),
        }

        started = time.perf_counter()
        nt = "".join(f"{q.subject} {q.predicate} {q.object} .\n" for q in memory._store)
        rdf = rdflib.Graph()
        rdf.parse(data=nt, format="nt")
        seconds = time.perf_counter() - started
        results["load_rdflib"] = {
            "triples": len(rdf),
            "seconds": round(seconds, 2),
            "triples_per_s": round(len(rdf) / seconds),
        }

        skipped = {str(p) for p in memory.profile.skipped_predicates}
        graph = relation_graph(
            (str(q.subject), str(q.predicate), str(q.object))
            for q in memory._store
            if str(q.predicate) not in skipped
        )
        rng = random.Random(args.seed)
        entities = [n[1:-1] for n in rng.sample(sorted(graph), 1000)]
        pairs = {
            h: [
                (a[1:-1], b[1:-1])
                for a, b in sample_pairs(graph, args.pairs, h, seed=args.seed + h)
            ]
            for h in (2, 3)
        }
        for store in (disk, memory):
            store.paths(NamedNode(entities[0]), NamedNode(entities[1]))  # warm up
        results["pyoxigraph_disk"] = measure(disk, entities, pairs)
        results["pyoxigraph_memory"] = measure(memory, entities, pairs)
        small = {h: p[: args.rdflib_pairs] for h, p in pairs.items()}
        results["rdflib_memory"] = measure(
            RdflibGraph(rdf, profile="metaqa", timeout=120), entities[:200], small
        )
        disk.close()
    path = save("kg", results)
    for key, value in results.items():
        print(f"{key}: {value}")
    print(f"saved {path}")


if __name__ == "__main__":
    main()

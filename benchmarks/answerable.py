"""How many sampled questions the graph can answer at all: the ceiling for every method.

For each question of the seeded sample `kgmw eval` draws, is a gold answer the label
of an entity within N hops of a topic entity? Run after loading the stores
(benchmarks/run_eval.sh does), from this folder:

    ../.venv/bin/python answerable.py --store ~/kg/fb15k --dataset webquestions --split test --only-in-graph
    ../.venv/bin/python answerable.py --store ~/kg/metaqa --dataset metaqa-2hop --hops 2
"""

from __future__ import annotations

import argparse
import json

from common import DATASETS, save
from pyoxigraph import NamedNode

from middleware.eval.datasets import load_dataset, sample
from middleware.eval.metrics import normalize
from middleware.eval.topics import in_graph, topic_iris
from middleware.kg.backends.local import LocalStore


def reachable_names(graph: LocalStore, start: list[str], hops: int) -> set[str]:
    """Normalized labels of every entity within ``hops`` of ``start`` (literals too)."""
    frontier = {NamedNode(i) for i in start}
    seen = set(frontier)
    names: set[str] = set()
    for _ in range(hops):
        nxt = set()
        for node in frontier:
            for triple in graph.neighbors(node, limit=1000):
                for term in (triple.subject, triple.object):
                    if term not in seen:
                        seen.add(term)
                        if isinstance(term, NamedNode):
                            nxt.add(term)
        frontier = nxt
    labels = graph.labels(list(seen))
    names |= {normalize(v) for v in labels.values()}
    return names


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--hops", type=int, default=2)
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only-in-graph", action="store_true")
    args = parser.parse_args()
    graph = LocalStore(args.store, read_only=True)
    keep = (lambda item: in_graph(item, graph)) if args.only_in_graph else None
    data = load_dataset(args.dataset, split=args.split, data_dir=DATASETS, keep=keep)
    items = sample(data.items, limit=args.limit, seed=args.seed)
    answerable = 0
    for item in items:
        names = reachable_names(graph, topic_iris(item, graph.profile), args.hops)
        answerable += any(normalize(a) in names for a in item.answers)
    result = {
        "dataset": args.dataset,
        "split": args.split,
        "questions": len(items),
        "hops": args.hops,
        "answerable": answerable,
        "share": round(answerable / len(items), 3),
    }
    print(json.dumps(result))
    save(f"answerable-{args.dataset}", result)


if __name__ == "__main__":
    main()

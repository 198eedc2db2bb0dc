"""Relation-path planning: mining cost per question, planner latency by graph and memory size.

    ../.venv/bin/python bench_plan.py [--learn 300] [--ask 100] [--sizes 4500,20000,100000]

Graphs: the full MetaQA KB and FB15k-237, each loaded into a temporary on-disk store.
Questions: MetaQA 1/2/3-hop **dev** (learned outside fold 0 of 5, asked from fold 0)
and WebQuestions (learned outside fold 0, asked from fold 0, 2 hops at most).

1. Mining: milliseconds per learned question (`mine()`: path queries, walks).
2. Planning: milliseconds per question for the whole planner (linking, masking, the
   encoder, the vote or the zero-shot ranking, the walks), no LLM; learned and
   zero-shot.
3. Memory size: the MetaQA memory repeated (with fresh keys) to each size in
   ``--sizes``; the same questions planned against each (exact NumPy search below
   50,000 entries, faiss above when it is installed).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import DATASETS, percentile, save

from middleware.config import Settings
from middleware.config.methods import PlanSettings
from middleware.eval.selection import choose
from middleware.eval.topics import answer_iris, topic_iris
from middleware.kg.backends.local import LocalStore
from middleware.kg.recipes import recipe
from middleware.kg.terms import to_iri
from middleware.planning.learning import Lesson, learn
from middleware.planning.memory import MemoryEntry, PathMemory
from middleware.planning.planner import Planner
from middleware.text.embeddings.factory import open_encoder
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer


def ms_stats(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 50), 2),
        "p95_ms": round(percentile(values, 95), 2),
        "mean_ms": round(float(np.mean(values)), 2) if values else float("nan"),
    }


def lessons_for(store: LocalStore, datasets: list[str], split: str, n: int) -> list[Lesson]:
    out = []
    for questions in choose(
        datasets, split=split, data_dir=DATASETS, limit=n, seed=1, folds=5, fold=0, held_out=False
    ):
        for item in questions.items:
            out.append(
                Lesson(
                    f"{questions.name}/{item.id}",
                    item.question,
                    tuple(to_iri(i) for i in topic_iris(item, store.profile)),
                    tuple(to_iri(i) for i in answer_iris(item, store)),
                    tuple(item.meta.get("topic_names", "").split("|")) + item.topic_entities,
                    item.meta.get("hops"),
                )
            )
    return out


def bench_graph(
    name: str, datasets: list[str], split: str, args: argparse.Namespace, max_hops: int
) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp()) / name
    chosen = recipe(name)
    store = LocalStore(folder, profile=chosen.profile, progress=False)
    store.load(list(chosen.paths(DATASETS)))
    encoder = open_encoder(Settings.build({"progress": False, "cache_dir": str(folder.parent)}))
    linker, verbalizer = EntityLinker(store), Verbalizer(store)
    linker.link("warm up")
    lessons = lessons_for(store, datasets, split, args.learn)
    memory = PathMemory.new(store, encoder.name)
    started = time.perf_counter()
    learn(
        store,
        memory,
        lessons,
        path=folder / "memory.json",
        linker=linker,
        encoder=encoder,
        max_hops=max_hops,
        progress=False,
    )
    mining_ms = (time.perf_counter() - started) * 1000 / max(1, len(lessons))
    asked = [
        i
        for q in choose(
            datasets, split=split, data_dir=DATASETS, limit=args.ask, seed=7, folds=5, fold=0
        )
        for i in q.items
    ]
    config = PlanSettings(max_hops=max_hops)
    result: dict[str, Any] = {
        "triples": len(store),
        "questions_learned": len(lessons),
        "mining_ms_per_question": round(mining_ms, 1),
    }
    for mode, mem in (("learned", memory), ("zero-shot", None)):
        planner = Planner(
            store, encoder, linker=linker, verbalizer=verbalizer, config=config, memory=mem
        )
        planner.plan(asked[0].question)  # index built, encoder warm
        times = []
        for item in asked:
            t = time.perf_counter()
            planner.plan(item.question)
            times.append((time.perf_counter() - t) * 1000)
        result[mode] = ms_stats(times)
    sizes = {}
    entries = list(memory.entries.values())
    for size in args.sizes:
        big = PathMemory(memory.source, memory.encoder, memory.fingerprint)
        for i in range(size):
            e = entries[i % len(entries)]
            big.add(MemoryEntry(f"{e.key}#{i}", e.question, e.paths, e.hops))
        assert memory.vectors is not None
        big.vectors = np.concatenate([memory.vectors] * (size // len(entries) + 1))[:size]
        planner = Planner(
            store, encoder, linker=linker, verbalizer=verbalizer, config=config, memory=big
        )
        planner.plan(asked[0].question)
        times = []
        for item in asked:
            t = time.perf_counter()
            planner.plan(item.question)
            times.append((time.perf_counter() - t) * 1000)
        sizes[str(size)] = {**ms_stats(times), "index": planner.index().backend}
    result["by_memory_size"] = sizes
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--learn", type=int, default=300, help="questions learned per dataset")
    parser.add_argument("--ask", type=int, default=100, help="questions planned per dataset")
    parser.add_argument("--sizes", default="4500,20000,100000", help="memory sizes")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    results = {
        "metaqa": bench_graph(
            "metaqa", ["metaqa-1hop", "metaqa-2hop", "metaqa-3hop"], "dev", args, 3
        ),
        "fb15k-237": bench_graph("fb15k-237", ["webquestions"], "test", args, 2),
    }
    for graph, found in results.items():
        print(
            f"{graph}: {found['triples']:,} triples; mining {found['mining_ms_per_question']} ms/question "
            f"({found['questions_learned']} learned)"
        )
        for mode in ("learned", "zero-shot"):
            print(f"  plan {mode}: p50 {found[mode]['p50_ms']} ms, p95 {found[mode]['p95_ms']} ms")
        for size, row in found["by_memory_size"].items():
            print(
                f"  memory {int(size):,}: p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms ({row['index']})"
            )
    save("plan", results)


if __name__ == "__main__":
    main()

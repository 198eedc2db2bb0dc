"""Entity linking on MetaQA dev: is the bracketed topic entity linked first?

    python benchmarks/bench_linking.py [--data-dir ../shared/datasets/metaqa] [--n 1000]

Loads the full KB, samples N dev questions (seeded) across the 1-, 2- and 3-hop dev
splits, links the text between [ and ] and checks the top entity. A second pass links
the same mentions lower-cased, as users type them.
"""

from __future__ import annotations

import argparse
import random
import re
import time
from pathlib import Path

from common import DATASETS, save, summary

from middleware.kg.backends.local import LocalStore
from middleware.text.linking import EntityLinker


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=DATASETS / "metaqa")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    store = LocalStore(profile="metaqa")
    store.load([args.data_dir / "kb.txt"])
    mentions = []
    for hops in (1, 2, 3):
        for line in (args.data_dir / f"{hops}-hop" / "qa_dev.txt").open(encoding="utf-8"):
            found = re.search(r"\[(.+?)\]", line)
            if found:
                mentions.append(found.group(1))
    chosen = random.Random(args.seed).sample(mentions, args.n)
    linker = EntityLinker(store)
    started = time.perf_counter()
    linker.link("warm up the index")
    build_s = time.perf_counter() - started
    results: dict[str, object] = {"questions": args.n, "index_build_s": round(build_s, 2)}
    for variant, transform in (("as_written", str), ("lower_case", str.lower)):
        right, times, misses = 0, [], []
        for mention in chosen:
            start = time.perf_counter()
            best = linker.best(transform(mention))
            times.append((time.perf_counter() - start) * 1000)
            if best is not None and best.iri.value == store.entity_iri(mention):
                right += 1
            else:
                misses.append((mention, best.label if best else None))
        results[variant] = {
            "top1": right / len(chosen),
            "right": right,
            "latency": summary(times),
            "misses": misses[:10],
        }
        print(
            f"{variant}: {right}/{len(chosen)} = {right / len(chosen):.2%} right first; {summary(times)}"
        )
        for mention, got in misses[:10]:
            print(f"  miss: {mention!r} -> {got!r}")
    print(f"saved {save('linking', results)}")


if __name__ == "__main__":
    main()

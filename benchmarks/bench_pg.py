"""Pseudo-graph method: time per question by stage, and ground-graph answer recall.

    ../.venv/bin/python bench_pg.py [--n 200] [--seed 7] [--full 20]

MetaQA 1-hop and 2-hop **dev** questions (the `kgmw eval` sample: seed 7), the full
MetaQA KB in an in-memory store. The drafts come from the embedded Gemma 3 270M (LLM
call 1, replies cached in a benchmark folder so the later passes reuse them). The
verification and answer calls are stubbed in the recall passes: recall is measured
on the ground graph, which they do not change. Passes:

1. cold: a new, empty embedding cache; the method as published (pseudo-triples are
   the only queries);
2. warm: the same again, every vector now cached;
3. +question: `pg_question_query` on (the question matched too), warm.

Then `--full` questions per split run the whole method with the embedded model (three
real LLM calls, no reply cache) for the LLM time of each call.

Ground-graph answer recall: a gold answer is the subject or object of a ground-graph
triple. Base-graph recall (the ceiling): a gold answer is in the base graph at all.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import DATASETS, percentile, save
from pyoxigraph import NamedNode

from middleware.eval.datasets import load_dataset, sample
from middleware.eval.items import EvalItem
from middleware.kg.backends.local import LocalStore
from middleware.llm.base import LLM, Choice, Completion, Message
from middleware.llm.cache import CachedLLM, ResponseCache
from middleware.llm.local import EmbeddedLLM
from middleware.llm.prompt_templates import flatten
from middleware.methods.answer import Answer
from middleware.methods.collect import neighbourhood
from middleware.methods.pseudograph import PseudoGraph, PseudoGraphConfig
from middleware.text.embeddings.cache import CachedEncoder, EmbeddingCache
from middleware.text.embeddings.encoders import SentenceEncoder
from middleware.text.folding import fold
from middleware.text.linking import EntityLinker

STAGES = ("link", "base_graph", "encode", "match", "prune")


class DraftOnly:
    """The real model for the draft; instant stand-ins for verification and answer."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.name = "draft-only"
        self.model = llm.model

    def complete(self, messages: Sequence[Message], **options: Any) -> Completion:
        if flatten(messages).rstrip().endswith("Plan:"):
            return self.llm.complete(messages, **options)
        return Completion(text="", backend="stub", model="stub", route="scripted")

    def choose(self, messages: Sequence[Message], options: Sequence[str], **kw: Any) -> Choice:
        raise NotImplementedError


def names_in(texts: list[str]) -> set[str]:
    found = set()
    for text in texts:
        parts = text.split(" | ")
        found.update(fold(p) for p in (parts[0], parts[-1]))
    return found


def ground_texts(answer: Answer) -> list[str]:
    prune = next(s for s in answer.steps if s.name == "prune").parsed
    return [
        t["text"] for src in prune["sources"].values() for g in src["kept"] for t in g["triples"]
    ]


def run_pass(
    store: LocalStore, items: list[EvalItem], llm: LLM, encoder: Any, question_query: bool
) -> dict[str, Any]:
    config = PseudoGraphConfig(question_query=question_query)
    method = PseudoGraph(llm, store, encoder=encoder, config=config)
    stages: dict[str, list[float]] = {s: [] for s in STAGES}
    draft_seconds: list[float] = []
    ground_hits = base_hits = grounded = 0
    subjects: list[int] = []
    for item in items:
        answer = method.run(item.question)
        for step in answer.steps:
            if step.name in stages:
                stages[step.name].append(step.seconds * 1000)
            if step.name == "draft":
                draft_seconds.append(step.seconds)
                subjects.append(len({t.split(" | ")[0] for t in step.parsed["triples"]}))
        gold = {fold(a) for a in item.answers}
        texts = ground_texts(answer)
        grounded += bool(texts)
        ground_hits += bool(gold & names_in(texts))
        link = next(s for s in answer.steps if s.name == "link").parsed[store.name]["linked"]
        iris = [NamedNode(n["iri"]) for n in link]
        base = [b.text for b in neighbourhood(store, iris, per_entity=100)]
        base_hits += bool(gold & names_in(base))
    n = len(items)
    return {
        "questions": n,
        "ground_graph_recall": round(100 * ground_hits / n, 1),
        "base_graph_recall": round(100 * base_hits / n, 1),
        "non_empty_ground_graph": round(100 * grounded / n, 1),
        "draft_subjects_p50": percentile([float(s) for s in subjects], 50),
        "stages_ms": {
            s: {"p50": round(percentile(v, 50), 2), "p95": round(percentile(v, 95), 2)}
            for s, v in stages.items()
        },
        "draft_seconds_p50": round(percentile(draft_seconds, 50), 2),
    }


def full_runs(store: LocalStore, items: list[EvalItem], llm: LLM, encoder: Any) -> dict[str, Any]:
    method = PseudoGraph(llm, store, encoder=encoder)
    per_call: dict[str, list[float]] = {"draft": [], "verify": [], "answer": []}
    calls: list[int] = []
    for item in items:
        answer = method.run(item.question)
        calls.append(answer.usage["llm_calls"])
        for step in answer.steps:
            if step.name in per_call and step.llm_calls:
                per_call[step.name].append(step.seconds)
    return {
        "questions": len(items),
        "llm_calls_mean": round(sum(calls) / len(calls), 2),
        "llm_seconds_p50": {k: round(percentile(v, 50), 2) for k, v in per_call.items() if v},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATASETS)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--full", type=int, default=20)
    args = parser.parse_args()
    store = LocalStore(profile="metaqa", name="metaqa")
    started = time.perf_counter()
    store.load([args.data / "metaqa" / "kb.txt"])
    _ = EntityLinker(store).index  # build the label index once, outside the timings
    print(f"loaded MetaQA in {time.perf_counter() - started:.1f} s", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    embedded = EmbeddedLLM(cache_dir=Path.home() / ".cache" / "kgmw", context=4096)
    cached_llm = CachedLLM(
        embedded, ResponseCache(Path(__file__).parent / "results" / "pg-llm.sqlite")
    )
    draft_llm = DraftOnly(cached_llm)
    model = SentenceEncoder("all-MiniLM-L6-v2")
    model.warm_up()  # "cold" below means an empty vector cache, not an unloaded model
    encoder = CachedEncoder(model, EmbeddingCache(work / "vectors.sqlite"), progress=False)
    report: dict[str, Any] = {"n": args.n, "seed": args.seed, "splits": {}}
    for split in ("metaqa-1hop", "metaqa-2hop"):
        items = sample(
            load_dataset(split, split="dev", data_dir=args.data).items, limit=args.n, seed=args.seed
        )
        result = {
            "cold": run_pass(store, items, draft_llm, encoder, question_query=False),
            "warm": run_pass(store, items, draft_llm, encoder, question_query=False),
            "+question": run_pass(store, items, draft_llm, encoder, question_query=True),
        }
        print(
            split,
            {k: (v["ground_graph_recall"], v["stages_ms"]["encode"]) for k, v in result.items()},
            flush=True,
        )
        if args.full:
            result["full"] = full_runs(store, items[: args.full], embedded, encoder)
            print(split, result["full"], flush=True)
        report["splits"][split] = result
    print(f"saved {save('pg', report)}")


if __name__ == "__main__":
    main()

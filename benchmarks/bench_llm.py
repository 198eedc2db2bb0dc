"""Embedded LLM speed: prompt and generation tokens/s, and choose() latency by option count.

Run: cd benchmarks && ../.venv/bin/python bench_llm.py
"""

from __future__ import annotations

import random
import tempfile
import time

from common import percentile, save

from middleware.kg.sample import sample_store
from middleware.llm import EmbeddedLLM, user
from middleware.text.verbalize import Verbalizer


def sample_texts() -> tuple[list[str], list[str]]:
    """Verbalized triples and entity labels from the bundled sample graph."""
    kg = sample_store(cache_dir=tempfile.mkdtemp())
    rows = kg.query("SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 3000").rows
    verbalizer = Verbalizer(kg)
    facts = [
        f"{verbalizer.name(r['s'])} | {verbalizer.relation(r['p'])} | {verbalizer.name(r['o'])}"
        for r in rows
    ]
    labels = sorted({f.split(" | ")[0] for f in facts} | {f.split(" | ")[2] for f in facts})
    return facts, labels


def main() -> None:
    facts, labels = sample_texts()
    llm = EmbeddedLLM(cache_dir=tempfile.mkdtemp(), context=8192)
    started = time.perf_counter()
    llm.warm_up()
    load_s = time.perf_counter() - started
    rng = random.Random(0)

    prompt_rates = []
    for i in range(5):  # different prompts each time: llama.cpp reuses a shared prefix
        chunk = rng.sample(facts, 60)
        text = f"Run {i}.\n" + "\n".join(chunk) + "\nQ: Which film is listed first?\nA:"
        done = llm.complete([user(text)], max_tokens=1)
        prompt_rates.append(done.prompt_tokens / done.seconds)

    gen_rates = []
    for i in range(5):
        done = llm.complete([user(f"Story {i}: Once upon a time")], max_tokens=128)
        gen_rates.append(done.completion_tokens / done.seconds)

    choose = {}
    for count in (10, 50, 200):
        ms = []
        for _ in range(10):
            options = rng.sample(labels, count)
            started = time.perf_counter()
            picked = llm.choose([user("Which of these is a film director?")], options)
            ms.append((time.perf_counter() - started) * 1000)
            assert picked.option in options
        choose[count] = {
            "p50_ms": round(percentile(ms, 50), 1),
            "p95_ms": round(percentile(ms, 95), 1),
        }

    result = {
        "model": llm.model,
        "load_seconds": round(load_s, 2),
        "prompt_tokens_per_s_p50": round(percentile(prompt_rates, 50), 1),
        "generation_tokens_per_s_p50": round(percentile(gen_rates, 50), 1),
        "choose_latency": choose,
    }
    print(result)
    print("saved", save("llm", result))


if __name__ == "__main__":
    main()

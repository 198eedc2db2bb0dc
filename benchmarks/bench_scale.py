"""Cost against graph size: FB15k-237 copied ×1, ×10 and ×100, learned on and answered.

    python benchmarks/bench_scale.py --work /work/scale [--sizes 1,10,100] [--variant own]
        [--questions 200] [--llm-methods ksl+plan,rok+plan,qsm,pg] [--llm-sizes 1,100]
        [--llm-questions 200] [--virtuoso-sizes 1,10] [--workers 2] [--answer-rounds 3]

One resumable run: each stage writes its numbers to ``WORK/stages/NAME.json`` and is
skipped when that file is there (delete it to run the stage again); the report,
``results/bench_scale.json`` and ``results/bench_scale.png``, is written from whatever
stages are done.

**The graphs.** FB15k-237 (``kgmw load --recipe fb15k-237``, exported as N-Triples,
310,116 relation triples and 14,951 labels) is copied k times into one N-Triples file,
the input format loaded. Entities with 200 or more edges (hubs) are shared by every
copy, so their degree grows k times; every other entity of copy c ≥ 1 is renamed
(``m.0abc`` becomes ``m.0abc.c7``). With ``--variant own`` a renamed entity's label
gets the copy number ("Paris 7"); with ``--variant same`` it keeps the label, so each
name stands for k entities. Copy 0 is FB15k-237 itself, so the questions' Freebase ids
and answers are the same at every size.

**Per size.** Load into an embedded store (``kgmw load``: rate and peak RSS); learn a
path memory on WebQuestions folds 1-4 (``kgmw learn --folds 5 --fold 0``, default
settings: 3 hops); answer the same fixed fold-0 in-graph questions (``--questions``,
seed 7) with ``plan`` at every size and the LLM methods at ``--llm-sizes``
(``kgmw eval``: p50/p95 without LLM time, LLM time apart, SPARQL queries per question,
timeouts, Hits@1, peak RSS; ``--answer-rounds`` runs of each, the p95 their median); link the same questions in a fresh process (label index
build time and RSS, linking p50/p95). At ``--virtuoso-sizes`` the graph is also bulk
loaded into Virtuoso and each question's graph-side evidence compared with the
embedded store's (``bench_virtuoso_identity.evidence``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from answer_rounds import method_numbers
from common import DATASETS, RESULTS, percentile, save

KGMW = str(Path(sys.executable).parent / "kgmw")
HUB_DEGREE = 200
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
_LINE = re.compile(r"^(<[^>]*>) (<[^>]*>) (.*) \.$")


# -- the stages' bookkeeping ------------------------------------------------------------
def stage(work: Path, name: str, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``run``'s numbers, kept in ``work/stages/name.json`` (a done stage is not run again)."""
    path = work / "stages" / f"{name}.json"
    if path.exists():
        return dict(json.loads(path.read_text()))
    print(f"== {name}", flush=True)
    started = time.perf_counter()
    numbers = run()
    numbers["stage_seconds"] = round(time.perf_counter() - started, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(numbers, indent=2))
    print(f"   {json.dumps(numbers)[:400]}", flush=True)
    return numbers


def measured(
    command: list[str], log: Path, environment: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``command`` (output to ``log``, with ``environment`` added to this process's):
    its wall seconds and peak RSS in MiB."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with log.open("w") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(environment or {})}
        )
        _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        tail = log.read_text(errors="replace")[-2000:]
        raise SystemExit(f"{' '.join(command)} failed ({code}):\n{tail}")
    return {"seconds": round(seconds, 2), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1)}


def load_split(folder: Path) -> dict[str, float]:
    """What ``kgmw load`` reported of its two parts: the rate of loading into the store,
    and the seconds spent indexing the labels for linking after the swap."""
    text = (folder / "load.log").read_text()
    rate = re.search(r"in [\d.]+ s \(([\d,]+) triples/s\)", text)
    indexing = re.search(
        r"indexed [\d,]+ label texts (?:and .+? predicate\(s\) )?in ([\d.]+) s", text
    )
    return {
        "store_triples_per_s": float(rate[1].replace(",", "")) if rate else float("nan"),
        "label_index_s": float(indexing[1]) if indexing else float("nan"),
    }


# -- the graphs --------------------------------------------------------------------------
def base_triples(work: Path, data_dir: Path) -> Path:
    """FB15k-237 as N-Triples, from the recipe's store."""
    target = work / "base" / "fb15k-237.nt"
    if target.exists():
        return target
    store = work / "base" / "store"
    subprocess.run(
        [
            KGMW,
            "load",
            "--recipe",
            "fb15k-237",
            "--data-dir",
            str(data_dir),
            "--store",
            str(store),
            "--no-progress",
        ],
        check=True,
    )
    subprocess.run(
        [KGMW, "export", "--store", str(store), "--format", "nt", "--out", str(target)],
        check=True,
    )
    return target


def generate(base: Path, target: Path, copies: int, variant: str) -> dict[str, Any]:
    """``copies`` copies of ``base`` in one N-Triples file (hubs shared; see the module doc)."""
    rows: list[tuple[str, str, str]] = []
    degree: dict[str, int] = {}
    for line in base.read_text(encoding="utf-8").splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        s, p, o = match.groups()
        rows.append((s, p, o))
        if p != LABEL:
            degree[s] = degree.get(s, 0) + 1
            if o.startswith("<"):
                degree[o] = degree.get(o, 0) + 1
    hubs = {node for node, d in degree.items() if d >= HUB_DEGREE}
    written = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as out:
        for copy in range(copies):
            suffix = f".c{copy}>"

            def name(node: str, suffix: str = suffix) -> str:
                return node if node in hubs or not node.startswith("<") else node[:-1] + suffix

            lines = []
            for s, p, o in rows:
                if copy == 0:
                    lines.append(f"{s} {p} {o} .\n")
                elif p == LABEL:
                    if s in hubs:
                        continue  # a shared hub keeps its one label
                    if variant == "own":
                        o = o[:-1] + f' {copy}"' if o.endswith('"') else o
                    lines.append(f"{name(s)} {p} {o} .\n")
                else:
                    lines.append(f"{name(s)} {p} {name(o)} .\n")
            out.writelines(lines)
            written += len(lines)
    return {
        "copies": copies,
        "variant": variant,
        "triples": written,
        "hubs": len(hubs),
        "largest_hub_degree": max(degree.values()) * copies,
        "bytes": target.stat().st_size,
    }


# -- answering ---------------------------------------------------------------------------
QUESTIONS = ["--dataset", "webquestions", "--split", "test", "--only-in-graph"]


def fold0() -> list[str]:
    """The question options of every stage: WebQuestions, fold 0 of 5 held out."""
    return [*QUESTIONS, "--data-dir", str(ARGS.data_dir), "--folds", "5", "--fold", "0"]


def answer(store: Path, memory: Path, methods: list[str], count: int, out: Path) -> dict[str, Any]:
    """``kgmw eval`` of the fixed fold-0 questions with ``methods``, planning with the path
    memory learned at that size, ``--answer-rounds`` times (``out``, then ``out-r2``, ...);
    per method's numbers (``answer_rounds.py``)."""
    runs, rounds = [], []
    for k in range(1, ARGS.answer_rounds + 1):
        folder = out if k == 1 else out.with_name(f"{out.name}-r{k}")
        command = [
            KGMW,
            "eval",
            *fold0(),
            "--limit",
            str(count),
            "--seed",
            "7",
            "--store",
            str(store),
            "--out",
            str(folder),
            "--no-progress",
        ]
        command += [f"--method={m}" for m in methods]
        runs.append(measured(command, folder / "eval.log", {"KGMW_PLAN_MEMORY": str(memory)}))
        lines = (folder / "results.jsonl").read_text().splitlines()
        rounds.append([json.loads(line) for line in lines])
    per_method = {
        method: method_numbers(
            [[r for r in records if r["method"] == method] for records in rounds]
        )
        for method in methods
    }
    return {
        "peak_rss_mib": max(run["peak_rss_mib"] for run in runs),
        "seconds": round(sum(run["seconds"] for run in runs), 1),
        "methods": per_method,
    }


def resident_mib() -> float:
    """This process's resident memory now, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def link_probe(store: str, questions: str) -> None:
    """In a fresh process: build the label index, then link each question; print JSON."""
    from middleware.kg.backends.local import LocalStore
    from middleware.text.linking import EntityLinker

    texts = json.loads(Path(questions).read_text())
    graph = LocalStore(store, read_only=True)
    before = resident_mib()
    linker = EntityLinker(graph)
    started = time.perf_counter()
    linker.link("warm up the label index")
    build = time.perf_counter() - started
    index_mib = resident_mib() - before
    times = []
    for text in texts:
        started = time.perf_counter()
        linker.spans(text)
        times.append(time.perf_counter() - started)
    print(
        json.dumps(
            {
                "index_build_s": round(build, 2),
                "label_index_rss_mib": round(index_mib, 1),
                "link_p50_ms": round(percentile(times, 50) * 1000, 1),
                "link_p95_ms": round(percentile(times, 95) * 1000, 1),
                "questions": len(texts),
            }
        )
    )


def fixed_questions(store: Path, count: int) -> list[dict[str, Any]]:
    """The fold-0 in-graph WebQuestions questions answered at every size, drawn as
    ``kgmw eval`` draws them, with their topics as IRIs."""
    from middleware.eval.selection import choose
    from middleware.eval.topics import in_graph, topic_iris
    from middleware.kg.backends.local import LocalStore

    graph = LocalStore(store, read_only=True)
    chosen = choose(
        ["webquestions"],
        split="test",
        data_dir=ARGS.data_dir,
        limit=count,
        seed=7,
        keep=lambda item: in_graph(item, graph),
        folds=5,
        fold=0,
        held_out=True,
        graph=graph,
    )
    return [
        {"question": i.question, "topics": topic_iris(i, graph.profile), "answers": list(i.answers)}
        for q in chosen
        for i in q.items
    ]


# -- one size ----------------------------------------------------------------------------
def size_run(work: Path, base: Path, k: int) -> dict[str, Any]:
    tag = f"x{k}-{ARGS.variant}"
    folder = work / tag
    graph = folder / "graph.nt"
    numbers: dict[str, Any] = {"size": k}
    numbers["graph"] = stage(work, f"{tag}-graph", lambda: generate(base, graph, k, ARGS.variant))
    store = folder / "store"

    def load() -> dict[str, Any]:
        run = measured(
            [
                KGMW,
                "load",
                str(graph),
                "--store",
                str(store),
                "--profile",
                "freebase",
                "--replace",
                "--no-progress",
            ],
            folder / "load.log",
        )
        triples = numbers["graph"]["triples"]
        return {**run, "triples_per_s": round(triples / run["seconds"]), **load_split(folder)}

    numbers["load"] = stage(work, f"{tag}-load", load)

    memory = folder / "memory.json"

    def learn() -> dict[str, Any]:
        out = folder / "learn.json"
        command = [
            KGMW,
            "learn",
            *fold0(),
            "--store",
            str(store),
            "--memory",
            str(memory),
            "--json",
            "--no-progress",
            "--workers",
            str(ARGS.workers),
        ]
        run = measured(command, out)
        text = out.read_text()
        # the JSON document starts on a line of its own (warnings before it may hold braces)
        report = json.loads(text[("\n" + text).index("\n{\n") :])["report"]
        questions = sum(
            report[k]
            for k in ("learned", "without_topic", "without_answers", "over_budget", "refused")
        )
        timeouts = sum("timeout" in p for p in report["problems"])
        return {
            **run,
            "questions": questions,
            "learned": report["learned"],
            "with_paths": report["learned"] - report["without_paths"],
            "over_budget": report["over_budget"],
            "timeouts": timeouts,
            "seconds_per_question": round(run["seconds"] / max(1, questions), 4),
        }

    numbers["learn"] = stage(work, f"{tag}-learn", learn)
    numbers["answer_plan"] = stage(
        work,
        f"{tag}-answer-plan",
        lambda: answer(store, memory, ["plan"], ARGS.questions, folder / "eval-plan"),
    )
    if k in ARGS.llm_sizes and ARGS.llm_methods:
        numbers["answer_llm"] = stage(
            work,
            f"{tag}-answer-llm",
            lambda: answer(
                store, memory, ARGS.llm_methods, ARGS.llm_questions, folder / "eval-llm"
            ),
        )

    def link() -> dict[str, Any]:
        texts = folder / "questions.json"
        texts.write_text(
            json.dumps([q["question"] for q in fixed_questions(store, ARGS.questions)])
        )
        result = subprocess.run(
            [sys.executable, __file__, "link-probe", str(store), str(texts)],
            check=True,
            capture_output=True,
            text=True,
        )
        return dict(json.loads(result.stdout.strip().splitlines()[-1]))

    numbers["link"] = stage(work, f"{tag}-link", link)
    if k in ARGS.virtuoso_sizes:
        numbers["virtuoso"] = stage(work, f"{tag}-virtuoso", lambda: virtuoso(folder, store))
    return numbers


def virtuoso(folder: Path, store: Path) -> dict[str, Any]:
    """The graph bulk loaded into Virtuoso; each fixed question's graph-side evidence
    compared with the embedded store's."""
    import dataclasses

    from bench_virtuoso_identity import dump_shape, evidence
    from common import free_port

    from middleware.kg.backends.endpoint import SparqlEndpoint
    from middleware.kg.backends.local import LocalStore
    from middleware.kg.profiles import load_profile
    from tests.virtuoso_server import start_virtuoso

    shaped = folder / "virtuoso-data" / "graph.nt"
    shaped.parent.mkdir(parents=True, exist_ok=True)
    dump_shape(folder / "graph.nt", shaped)
    ours = LocalStore(store, read_only=True)
    started = time.perf_counter()
    server = start_virtuoso(
        [shaped], folder / "virtuoso", free_port, row_cap=1_000_000, time_limit=0, buffers=200_000
    )
    load_s = time.perf_counter() - started
    profile = load_profile("freebase")
    theirs = SparqlEndpoint(
        server.url, profile=dataclasses.replace(profile, dialect="virtuoso"), timeout=300
    )
    try:
        same, differing = 0, list[dict[str, Any]]()
        questions = fixed_questions(store, ARGS.questions)
        for q in questions:
            a = evidence(ours, q["topics"], [])
            b = evidence(theirs, q["topics"], [])
            if a == b:
                same += 1
            elif len(differing) < 10:
                differing.append(
                    {"question": q["question"], "ops": [op for op in a if a[op] != b[op]]}
                )
    finally:
        server.stop()
    return {
        "virtuoso_load_s": round(load_s, 1),
        "questions": len(questions),
        "identical_share": round(same / max(1, len(questions)), 4),
        "differing": differing,
    }


def report(runs: list[dict[str, Any]]) -> None:
    data = {
        "variant": ARGS.variant,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "sizes": runs,
    }
    print(f"saved {save('bench_scale', data)}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    sizes = [r["size"] for r in runs]
    figure, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    series = {
        "learn s/question": [r.get("learn", {}).get("seconds_per_question") for r in runs],
        "plan p95 s (no LLM)": [
            r.get("answer_plan", {}).get("methods", {}).get("plan", {}).get("p95_s_without_llm")
            for r in runs
        ],
        "link p95 s": [(r.get("link", {}).get("link_p95_ms") or 0) / 1000 for r in runs],
    }
    for label, values in series.items():
        axes[0].plot(sizes, values, marker="o", label=label)
    axes[0].set(xscale="log", xlabel="copies of FB15k-237", ylabel="seconds", title="time")
    axes[0].legend(fontsize=8)
    axes[1].plot(sizes, [r.get("load", {}).get("triples_per_s") for r in runs], marker="o")
    axes[1].set(xscale="log", xlabel="copies", ylabel="triples/s", title="load rate")
    axes[2].plot(
        sizes,
        [r.get("answer_plan", {}).get("peak_rss_mib") for r in runs],
        marker="o",
        label="answering (plan)",
    )
    axes[2].plot(
        sizes, [r.get("load", {}).get("peak_rss_mib") for r in runs], marker="o", label="load"
    )
    axes[2].set(xscale="log", xlabel="copies", ylabel="MiB", title="peak RSS")
    axes[2].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(RESULTS / "bench_scale.png", dpi=110)


def main() -> None:
    work = ARGS.work.resolve()
    base = base_triples(work, ARGS.data_dir)
    runs = [size_run(work, base, k) for k in ARGS.sizes]
    report(runs)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, default=DATASETS)
    parser.add_argument("--sizes", type=_ints, default=[1, 10, 100])
    parser.add_argument("--variant", choices=["own", "same"], default="own")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--llm-methods", type=_names, default=["ksl+plan", "rok+plan", "qsm", "pg"])
    parser.add_argument("--llm-sizes", type=_ints, default=[1, 100])
    parser.add_argument("--llm-questions", type=int, default=200)
    parser.add_argument("--virtuoso-sizes", type=_ints, default=[1, 10])
    parser.add_argument("--workers", type=int, default=2)
    # a p95 moves by a fifth between runs on a busy machine: the median of rounds holds
    parser.add_argument("--answer-rounds", type=int, default=3)
    return parser.parse_args()


ARGS = argparse.Namespace()

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "link-probe":
        link_probe(sys.argv[2], sys.argv[3])
    else:
        ARGS = arguments()
        main()

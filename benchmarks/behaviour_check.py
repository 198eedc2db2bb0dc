"""A fixed behaviour baseline for refactors: the same questions, the same methods,
the same answers, record for record.

Six methods (``plan``, ``rok+plan``, ``ksl+plan``, ``qsm``, ``pg``, ``rok``) answer 50
MetaQA dev questions per hop count and 50 WebQuestions questions, each from fold 0 of
5 drawn with seed 7, with the embedded model. The path memories are learned from
questions outside fold 0 first. What is kept of each answer is its ``prediction``,
``hit``, ``evidence_recall`` and ``error``; timings are left out.

The LLM reply cache stays on: it answers a call only when the call is the same to the
byte (model, messages, options), and the embedded model at temperature 0 gives the same
reply to the same call, so a cached reply is the reply the model would give. A change
that alters a prompt misses the cache and asks the model. The recording run fills the
cache; a check run is then mostly lookups (minutes instead of hours on 2 cores).

    cd benchmarks
    ../.venv/bin/python behaviour_check.py --metaqa ~/kg/metaqa --fb15k ~/kg/fb15k \\
        --work runs/behaviour --record baselines/behaviour.json   # before
    ../.venv/bin/python behaviour_check.py --metaqa ~/kg/metaqa --fb15k ~/kg/fb15k \\
        --work runs/behaviour-after --check baselines/behaviour.json   # after

``--check`` prints every record that differs and exits 1 if any does; ``--sets
metaqa`` (or ``webq``) answers and compares one set only. Record with both. A run into
a ``--work`` folder that already holds results resumes it (``kgmw eval`` resumes).
Stores: ``kgmw load --recipe metaqa`` and ``kgmw load --recipe fb15k-237``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

METHODS = ("plan", "rok+plan", "ksl+plan", "qsm", "pg", "rok")
KEPT = ("prediction", "hit", "evidence_recall", "error")
DRAW = ("--folds", "5", "--fold", "0", "--limit", "50", "--seed", "7")
METAQA_LEARN = ("--limit", "500", "--seed", "1")
WEBQ_ENV = {"KGMW_PLAN_MAX_HOPS": "2", "KGMW_PLAN_MAX_PLANS": "8"}


def kgmw(*args: str, env: dict[str, str] | None = None) -> None:
    """Run one ``kgmw`` command beside this interpreter; stop on failure."""
    command = [str(Path(sys.executable).with_name("kgmw")), *args]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True, env={**os.environ, **(env or {})})


def learn(work: Path, data: str, metaqa: str, fb15k: str) -> tuple[Path, Path]:
    """Path memories learned outside fold 0 (kept in ``work``, learned once)."""
    metaqa_memory, webq_memory = work / "metaqa-memory.json", work / "webq-memory.json"
    hops = [f"--dataset=metaqa-{n}hop" for n in (1, 2, 3)]
    if not metaqa_memory.exists():
        kgmw("learn", *hops, "--data-dir", data, "--split", "dev", "--folds", "5",
             "--fold", "0", *METAQA_LEARN, "--store", metaqa, "--memory", str(metaqa_memory),
             "--no-progress")  # fmt: skip
    if not webq_memory.exists():
        kgmw("learn", "--dataset", "webquestions", "--data-dir", data, "--split", "test",
             "--folds", "5", "--fold", "0", "--store", fb15k, "--memory", str(webq_memory),
             "--no-progress", env=WEBQ_ENV)  # fmt: skip
    return metaqa_memory, webq_memory


def answer(
    work: Path, data: str, metaqa: str, fb15k: str, sets: list[str], chosen: list[str]
) -> list[Path]:
    """The ``chosen`` methods on the question sets named (``metaqa``, ``webq``); their
    results files."""
    metaqa_memory, webq_memory = learn(work, data, metaqa, fb15k)
    methods = [f"--method={m}" for m in chosen]
    hops = [f"--dataset=metaqa-{n}hop" for n in (1, 2, 3)]
    if "metaqa" in sets:
        kgmw("eval", *hops, "--split", "dev", "--data-dir", data, *DRAW, *methods,
             "--store", metaqa, "--out", str(work / "metaqa"),
             env={"KGMW_PLAN_MEMORY": str(metaqa_memory)})  # fmt: skip
    if "webq" in sets:
        kgmw("eval", "--dataset", "webquestions", "--split", "test", "--only-in-graph",
             "--data-dir", data, *DRAW, *methods, "--store", fb15k, "--out", str(work / "webq"),
             env={**WEBQ_ENV, "KGMW_PLAN_MEMORY": str(webq_memory)})  # fmt: skip
    return [work / name / "results.jsonl" for name in sets]


def behaviour(results: list[Path]) -> dict[str, dict[str, Any]]:
    """What a refactor must not change, by record key."""
    kept: dict[str, dict[str, Any]] = {}
    for path in results:
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            kept[record["key"]] = {name: record.get(name) for name in KEPT}
    return dict(sorted(kept.items()))


def differences(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    """One line per record that is missing, new or changed."""
    lines = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old != new:
            lines.append(f"{key}\n  before: {json.dumps(old)}\n  after:  {json.dumps(new)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metaqa", required=True, help="store folder of the MetaQA graph")
    parser.add_argument("--fb15k", required=True, help="store folder of FB15k-237")
    parser.add_argument("--data-dir", default="../../shared/datasets")
    parser.add_argument("--work", type=Path, required=True, help="folder for memories, results")
    parser.add_argument(
        "--sets", nargs="+", choices=("metaqa", "webq"), default=["metaqa", "webq"],
        help="question sets to answer (default both; a check compares only these)",
    )  # fmt: skip
    parser.add_argument(
        "--methods", nargs="+", choices=METHODS, default=list(METHODS),
        help="methods to run (default all; a check compares only these): plan alone "
        "needs no LLM, so it checks the graph side in minutes with a cold reply cache",
    )  # fmt: skip
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--record", type=Path, help="write the baseline here")
    which.add_argument("--check", type=Path, help="compare with this baseline")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    now = behaviour(
        answer(args.work, args.data_dir, args.metaqa, args.fb15k, args.sets, args.methods)
    )
    if args.record:
        args.record.write_text(json.dumps(now, indent=1, ensure_ascii=False) + "\n")
        print(f"recorded {len(now)} answers in {args.record}")
        return 0
    recorded = json.loads(args.check.read_text(encoding="utf-8"))
    prefixes = tuple(("metaqa" if name == "metaqa" else "webquestions") for name in args.sets)

    def compared(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        # the work folder may hold other methods' answers from an earlier run
        return {
            key: value
            for key, value in records.items()
            if key.startswith(prefixes) and key.split("/")[2] in args.methods
        }

    before = compared(recorded)
    changed = differences(before, compared(now))
    print("\n".join(changed))
    print(f"{len(changed)} of {len(before)} answers differ")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())

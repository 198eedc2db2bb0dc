"""Calibration and "not in the graph", per method, out of sample.

Reads the runs of ``calibration_runs.sh`` and, per method, splits its answers in two
halves by a hash of their key; each half is scored by the model fitted on the other
(as ``kgmw calibrate`` does, per source profile where one has enough answers). For each threshold it reports, per answerable set, Hits@1
as it was before answers had to be supported (what the method said, given regardless)
against Hits@1 now (supported, and confident enough); per unanswerable kind, the share
of questions that get "not in the graph"; and the expected calibration error and
risk-coverage rows over everything the method said.

    .venv/bin/python benchmarks/calibration_table.py RUNS 0.3,0.4,0.5
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from middleware.eval.calibrate import MIN_PROFILE_RECORDS, MIN_RECORDS
from middleware.methods.calibration import (
    Basis,
    expected_calibration_error,
    fit_model,
    risk_coverage,
)

METHODS = {
    "plan (zero-shot)": ["mq-plan", "un-plan", "wq-plan"],
    "plan (learned)": ["mq-planL", "un-planL", "wq-planL"],
    "plan (generated)": ["mq-planG", "un-planG", "wq-planG"],
    "rok": ["mq-rok", "un-rok", "wq-rok"],
    "qsm": ["mq-qsm", "un-qsm", "wq-qsm"],
    "pg": ["mq-pg", "un-pg", "wq-pg"],
    "ksl": ["mq-ksl", "un-ksl"],
    "qsm+plan (learned)": ["mq-qsm+plan", "un-qsm+plan", "wq-qsm+plan"],
    "ksl+plan (learned)": ["mq-ksl+plan", "un-ksl+plan", "wq-ksl+plan"],
    "rok+plan (learned)": ["mq-rok+plan", "un-rok+plan", "wq-rok+plan"],
    # no path memory, as by default: the planner's zero-shot mode
    "ksl+plan (zero-shot)": ["mq-ksl+planZ", "un-ksl+planZ"],
    "rok+plan (zero-shot)": ["mq-rok+planZ", "un-rok+planZ"],
    "qsm+plan (zero-shot)": ["mq-qsm+planZ", "un-qsm+planZ"],
    "pg+plan (zero-shot)": ["mq-pg+planZ", "un-pg+planZ"],
}
KINDS = ("made-up-entity", "absent-relation")


def half(key: str) -> int:
    return hashlib.sha256(key.encode()).digest()[0] % 2


def records(runs: Path, names: list[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for name in names:
        path = runs / name / "results.jsonl"
        if path.exists():
            found += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in found if not r.get("error")]


def out_of_sample(said: list[dict[str, Any]]) -> dict[str, float]:
    """Each answer scored by a model fitted on the other half: its source profile's
    model where that profile has enough answers for one (as ``kgmw calibrate`` fits them), else the
    model of every profile's answers."""
    confidence: dict[str, float] = {}
    profiles = {r["basis"].get("profile", "") for r in said}
    groups = [said] + [
        [r for r in said if r["basis"].get("profile", "") == p] for p in profiles if p
    ]
    for number, group in enumerate(groups):  # all first; a profile's own model overrides
        least = MIN_RECORDS if number == 0 else MIN_PROFILE_RECORDS
        if len(group) < least or len({bool(r["answer_hit"]) for r in group}) < 2:
            continue
        for held in (0, 1):
            train = [r for r in group if half(r["key"]) != held]
            if len({bool(r["answer_hit"]) for r in train}) < 2:
                continue
            model = fit_model(
                [Basis(**r["basis"]) for r in train], [r["answer_hit"] for r in train]
            )
            for r in group:
                if half(r["key"]) == held:
                    confidence[r["key"]] = model.probability(Basis(**r["basis"]))
    return confidence


def kept(r: dict[str, Any], confidence: dict[str, float], threshold: float) -> bool:
    """Whether the answer is given under the policy: said, supported, sure enough."""
    said = r.get("answer_hit") is not None and r.get("basis")
    return bool(said and r["basis"]["supported"] and confidence.get(r["key"], 0) >= threshold)


def report(label: str, rows: list[dict[str, Any]], thresholds: list[float]) -> None:
    said = [r for r in rows if r.get("answer_hit") is not None and r.get("basis")]
    confidence = out_of_sample(said)
    if any(r["key"] not in confidence for r in said):
        print(f"\n{label}: {len(said)} answers said, too few (or all alike) to fit; skipped")
        return
    labels = [bool(r["answer_hit"]) for r in said]
    scores = [confidence[r["key"]] for r in said]
    print(f"\n{label}: {len(rows)} questions, {len(said)} answers said, "
          f"ECE {expected_calibration_error(scores, labels):.3f}")  # fmt: skip
    for dataset in sorted({r["dataset"] for r in rows}):
        group = [r for r in rows if r["dataset"] == dataset]
        for t in thresholds:
            if dataset == "unanswerable-metaqa":
                parts = []
                for kind in KINDS:
                    items = [r for r in group if r["meta"]["kind"] == kind]
                    share = sum(not kept(r, confidence, t) for r in items) / max(len(items), 1)
                    parts.append(f"{kind} {share:.2f}")
                print(f"  {dataset} (n={len(group)}) t={t}: not in the graph: {', '.join(parts)}")
            else:
                before = sum(bool(r["answer_hit"]) for r in group) / len(group)
                now = sum(bool(r["answer_hit"]) and kept(r, confidence, t) for r in group)
                now /= len(group)
                print(f"  {dataset} (n={len(group)}) t={t}: Hits@1 {before:.3f} -> {now:.3f} "
                      f"({(now - before) * 100:+.1f})")  # fmt: skip
    rows_rc = risk_coverage(scores, labels, points=[0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8])
    print(
        "  threshold: coverage / risk  " + "  ".join(f"{t}: {c:.2f}/{k:.2f}" for t, c, k in rows_rc)
    )


def main() -> None:
    runs = Path(sys.argv[1])
    thresholds = [float(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0.4]
    for label, names in METHODS.items():
        rows = records(runs, names)
        if rows:
            report(label, rows, thresholds)


if __name__ == "__main__":
    main()

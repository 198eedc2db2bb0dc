"""Fit confidence to correctness from eval results: one logistic model per method.

A method's answers over sources of one profile get a model of their own as well
("plan:learned@freebase") when there are at least ``MIN_PROFILE_RECORDS`` of them, used
for that profile; the model of every profile's answers serves the others.

Each results record of ``kgmw eval`` keeps what its answer rested on (``basis``) and
whether what the method said, or would have said, was right (``answer_hit``; an answer
to an unanswerable question is never right). Records where nothing was said are left
out. The data should mix answerable and unanswerable questions (``--dataset
unanswerable-metaqa`` beside the answerable sets), so that support which holds the
wrong relation, or starts at a made-up name, is seen to be wrong.

Expected calibration error and the risk-coverage rows are measured out of sample:
records are split in two by a hash of their key, each half scored by the model fitted
on the other.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from middleware.errors import BadRequest
from middleware.methods.calibration import (
    Basis,
    Calibration,
    Model,
    expected_calibration_error,
    fit_model,
    risk_coverage,
    rule_confidence,
)

MIN_RECORDS = 20  # fewer answers than this for a method: no model is fitted
# fewer answers than this over one source profile: that profile's answers are scored by
# the model of every profile's (a model of its own would fit noise)
MIN_PROFILE_RECORDS = 100


def least_records(name: str) -> int:
    """The fewest answers a model named ``name`` is fitted on."""
    return MIN_PROFILE_RECORDS if "@" in name else MIN_RECORDS


@dataclass(frozen=True)
class Example:
    key: str
    dataset: str
    basis: Basis
    right: bool
    answerable: bool


@dataclass
class MethodReport:
    """One method's fit: how many answers, how often right, and out-of-sample quality."""

    method: str
    answers: int
    right: int
    ece: float
    ece_before: float  # the same answers scored by the fixed rule
    rows: list[tuple[float, float, float]] = field(default_factory=list)  # risk-coverage
    datasets: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "answers": self.answers,
            "right": self.right,
            "ece": self.ece,
            "ece_rule": self.ece_before,
            "risk_coverage": [{"threshold": t, "coverage": c, "risk": r} for t, c, r in self.rows],
            "datasets": self.datasets,
        }


def read_examples(paths: Iterable[Path]) -> dict[str, list[Example]]:
    """Examples by method from results files or the folders holding them."""
    found: dict[str, list[Example]] = defaultdict(list)
    for path in paths:
        file = path / "results.jsonl" if path.is_dir() else path
        if not file.exists():
            raise BadRequest(
                f"no results at {file}", hint="give the --out folder of a `kgmw eval` run"
            )
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise BadRequest(f"{file}:{number}: not JSON ({err.msg})") from err
            where = f"{file}:{number}"
            if not isinstance(record, dict):
                raise BadRequest(f"{where}: not a results record (a JSON object)")
            if record.get("answer_hit") is None or not record.get("basis"):
                continue  # nothing said, a failure, or a run from before bases were kept
            try:
                basis = Basis(**record["basis"])
                record["key"], record["dataset"], record["method"]
            except (TypeError, KeyError) as err:
                raise BadRequest(
                    f"{where}: not a results record of this version ({err})",
                    hint="give the results of `kgmw eval` runs made with this version",
                ) from err
            key = f"{record['method']}:{basis.mode}" if basis.mode else record["method"]
            example = Example(
                record["key"],
                record["dataset"],
                basis,
                bool(record["answer_hit"]),
                record.get("answerable", True) is not False,
            )
            found[key].append(example)  # every profile's answers: for any source
            if basis.profile:
                found[f"{key}@{basis.profile}"].append(example)
    # a profile that holds all of a method's answers adds nothing to its model
    return {
        name: items
        for name, items in found.items()
        if "@" not in name or len(items) < len(found[name.split("@")[0]])
    }


def _half(key: str) -> int:
    return hashlib.sha256(key.encode()).digest()[0] % 2


def fit(examples: dict[str, list[Example]]) -> tuple[Calibration, list[MethodReport]]:
    """Models per method (fitted on all their examples) and out-of-sample reports."""
    models: dict[str, Model] = {}
    reports: list[MethodReport] = []
    for method, items in sorted(examples.items()):
        if len(items) < least_records(method) or len({_half(e.key) for e in items}) < 2:
            continue  # too few to fit, or no half to measure on: see ``skipped``
        if len({e.right for e in items}) < 2:
            continue  # all right or all wrong: nothing to tell them apart by
        confidences: list[float] = []
        labels: list[bool] = []
        for held in (0, 1):
            train = [e for e in items if _half(e.key) != held]
            test = [e for e in items if _half(e.key) == held]
            if not train or not test:
                continue
            model = fit_model([e.basis for e in train], [e.right for e in train])
            confidences += [model.probability(e.basis) for e in test]
            labels += [e.right for e in test]
        whole = fit_model([e.basis for e in items], [e.right for e in items])
        datasets = sorted({e.dataset for e in items})
        models[method] = Model(
            whole.names,
            whole.weights,
            {"answers": len(items), "right": sum(e.right for e in items), "datasets": datasets},
        )
        rule = [rule_confidence(e.basis) for e in items]
        reports.append(
            MethodReport(
                method,
                len(items),
                sum(e.right for e in items),
                expected_calibration_error(confidences, labels),
                expected_calibration_error(rule, [e.right for e in items]),
                risk_coverage(confidences, labels),
                datasets,
            )
        )
    return Calibration(models), reports


def skipped(examples: dict[str, list[Example]], reports: Sequence[MethodReport]) -> list[str]:
    """The methods with answers that got no model, each with why."""
    fitted = {r.method for r in reports}

    def why(name: str, items: list[Example]) -> str:
        if len(items) < least_records(name):
            return f"fewer than {least_records(name)}"
        if len({e.right for e in items}) < 2:
            return "all right" if items[0].right else "all wrong"
        return "all in one half"

    return [
        f"{method}: {len(items)} answers, {why(method, items)}"
        for method, items in sorted(examples.items())
        if method not in fitted
    ]


def merged(base: Calibration, fitted: Calibration, methods: Sequence[str] = ()) -> Calibration:
    """``base`` with ``fitted``'s models put in (all, or only ``methods``). A method
    fitted again loses the base's profile models ("rok@films") that were not fitted
    again: they were fitted on its old answers."""
    put = {n: m for n, m in fitted.models.items() if not methods or n in methods}
    refitted = {n for n in put if "@" not in n}
    models = {
        n: m
        for n, m in base.models.items()
        if "@" not in n or n.split("@")[0] not in refitted or n in put
    }
    return Calibration({**models, **put})

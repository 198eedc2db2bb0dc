"""Confidence as a probability: what an answer rests on, mapped by a fitted model.

``Basis`` records what the final stage knows about an answer: whether the evidence
supports it, how (the method's own share, the rank of the first supporting evidence
item, the shortest chain's length), whether its question entity links only weakly,
and how far the relation the question asks about is from the relations the support
holds (``relation_gap``, from ``planning/relation_fit.py``; 0 when unknown).

A ``Calibration`` maps a basis to the probability that the answer is right, one
logistic model per method, fitted on dev data that mixes answerable and unanswerable
questions (``kgmw calibrate``). The project ships one (``calibration.json`` beside this
module); a method it has no model for gets ``rule_confidence``, the fixed rule.

>>> basis = Basis(supported=True, share=1.0, rank=1, hops=1)
>>> rule_confidence(basis)
1.0
>>> model = Model(("bias", "supported"), (-2.0, 4.0))
>>> round(model.probability(basis), 3), round(model.probability(Basis()), 3)
(0.881, 0.119)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from middleware.errors import ConfigError

SHIPPED = Path(__file__).with_name("calibration.json")
WEAK_LINK_FACTOR = 0.25  # the rule: a weakly linked question entity scales confidence


@dataclass(frozen=True)
class Basis:
    """What the confidence of one answer rests on."""

    given: bool = True  # False: empty, or nothing to answer from
    evidence: bool = False  # the method found any evidence
    supported: bool = False
    share: float = 0.0  # the method's own score, else 1 / rank (0 when unsupported)
    rank: int = 0  # 1-based evidence item of the first supported answer entity; 0: none
    hops: int = 0  # the shortest supporting chain; 0: none
    weak: bool = False  # every supporting chain starts at a weakly linked entity
    relation_gap: float = 0.0  # asked relation's fit minus the support's best (>= 0)
    mode: str = ""  # the planner's mode where a plan was made: "learned", "generated", "zero-shot"
    fallback: bool = False  # the planner's best-ranked relation path reached nothing
    unheld: float = 0.0  # plans: how much the question asks for paths the topic lacks
    profile: str = ""  # the source profile the question was asked over (one for all)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def features(self) -> dict[str, float]:
        """The model's inputs (``FEATURES``)."""
        s = float(self.supported)
        share = min(max(self.share, 0.001), 0.999)
        return {
            "bias": 1.0,
            "evidence": float(self.evidence),
            "supported": s,
            "share": s * share,
            "share_logit": s * math.log(share / (1 - share)) / 7.0,  # within ±1
            "weak": s * float(self.weak),
            "long": s * float(self.hops > 1),
            "gap": s * min(max(self.relation_gap, 0.0), 1.0),
            "fallback": s * float(self.fallback),
            "unheld": s * min(max(self.unheld, 0.0), 1.0),
        }


FEATURES = tuple(Basis().features())


def rule_confidence(basis: Basis) -> float:
    """The fixed rule: 0 for nothing given; unsupported 0.1 (no evidence) or 0.2; supported
    0.5 + 0.5 × share, times ``WEAK_LINK_FACTOR`` for a weak link."""
    if not basis.given:
        return 0.0
    if not basis.supported:
        return 0.2 if basis.evidence else 0.1
    value = 0.5 + 0.5 * min(max(basis.share, 0.0), 1.0)
    return round(value * (WEAK_LINK_FACTOR if basis.weak else 1.0), 4)


@dataclass(frozen=True)
class Model:
    """A logistic model over named features."""

    names: tuple[str, ...]
    weights: tuple[float, ...]
    fitted_on: Mapping[str, Any] = field(default_factory=dict)

    def probability(self, basis: Basis) -> float:
        if not basis.given:
            return 0.0
        values = basis.features()
        z = sum(w * values.get(n, 0.0) for n, w in zip(self.names, self.weights, strict=True))
        return round(1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0))), 4)


@dataclass(frozen=True)
class Calibration:
    """One model per method name; ``confidence`` falls back to the rule."""

    models: Mapping[str, Model] = field(default_factory=dict)

    def model(self, method: str, mode: str = "", profile: str = "") -> Model | None:
        """The model for ``method`` under a planner ``mode`` ("plan:learned"), or the
        method's own when no plan was made; fitted on the source ``profile`` asked
        ("plan:learned@freebase") where there is one, else on every profile. None (the
        rule) for a mode no model was fitted for: answers planned otherwise are
        another population."""
        name = f"{method}:{mode}" if mode else method
        if profile and f"{name}@{profile}" in self.models:
            return self.models[f"{name}@{profile}"]
        return self.models.get(name)

    def uses(self, method: str, feature: str) -> bool:
        """Whether any model of ``method`` weighs ``feature`` (so it is worth computing)."""
        return any(
            name.split("@")[0].split(":")[0] == method
            and any(n == feature and w != 0.0 for n, w in zip(m.names, m.weights, strict=True))
            for name, m in self.models.items()
        )

    def confidence(self, method: str, basis: Basis) -> float:
        model = self.model(method, basis.mode, basis.profile)
        return model.probability(basis) if model is not None else rule_confidence(basis)

    def to_json(self) -> str:
        data = {
            name: {
                "features": list(m.names),
                "weights": [round(w, 6) for w in m.weights],
                "fitted_on": dict(m.fitted_on),
            }
            for name, m in sorted(self.models.items())
        }
        return json.dumps(data, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Calibration:
        """A calibration from its JSON; ValueError says what is wrong with it."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("expected an object of models by method name")
        models = {}
        for name, m in data.items():
            if not isinstance(m, dict):
                raise ValueError(f"model {name!r} is not an object")
            names, weights = m.get("features"), m.get("weights")
            if not isinstance(names, list) or not isinstance(weights, list):
                raise ValueError(f"model {name!r} needs lists 'features' and 'weights'")
            unknown = [n for n in names if n not in FEATURES]
            if unknown:
                raise ValueError(
                    f"model {name!r} names unknown features {unknown} (known: {list(FEATURES)})"
                )
            if len(names) != len(weights) or not all(
                isinstance(w, int | float) and not isinstance(w, bool) for w in weights
            ):
                raise ValueError(f"model {name!r} needs one number in 'weights' per feature")
            fitted_on = m.get("fitted_on", {})
            models[name] = Model(
                tuple(names),
                tuple(float(w) for w in weights),
                fitted_on if isinstance(fitted_on, dict) else {},
            )
        return cls(models)


def load_calibration(path: str | None = None) -> Calibration:
    """The calibration at ``path`` (default: the shipped one; none shipped: the rule),
    read again when the file changes."""
    if not path:
        return _read(None, 0.0)
    where = Path(path).expanduser()
    try:
        changed = where.stat().st_mtime
    except OSError:
        changed = -1.0  # reading it says what is wrong
    return _read(str(where), changed)


@lru_cache(maxsize=8)
def _read(path: str | None, changed: float) -> Calibration:
    if not path:
        shipped = SHIPPED.exists()
        return (
            Calibration.from_json(SHIPPED.read_text(encoding="utf-8")) if shipped else Calibration()
        )
    where = Path(path).expanduser()
    hint = "point answer_calibration at a file written by `kgmw calibrate --out`, or unset it"
    try:
        return Calibration.from_json(where.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(
            f"cannot read the calibration {where}: {err.strerror}", hint=hint
        ) from err
    except (ValueError, KeyError, TypeError) as err:
        raise ConfigError(f"{where} is not a calibration file ({err})", hint=hint) from err


def fit_model(
    bases: Sequence[Basis], labels: Sequence[bool], *, l2: float = 0.05, steps: int = 100
) -> Model:
    """A logistic model fitted by Newton's method with an L2 penalty (not on the bias)."""
    x = np.array([[b.features()[n] for n in FEATURES] for b in bases], dtype=float)
    y = np.array([float(v) for v in labels])
    w = np.zeros(len(FEATURES))
    penalty = np.full(len(FEATURES), l2)
    penalty[0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        gradient = x.T @ (p - y) + penalty * w
        hessian = (x.T * (p * (1 - p))) @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return Model(FEATURES, tuple(float(v) for v in w), {"answers": len(bases)})


def expected_calibration_error(
    confidences: Sequence[float], labels: Sequence[bool], *, bins: int = 10
) -> float:
    """ECE: the mean gap between confidence and accuracy over equal-width bins, weighted
    by how many answers fall in each.

    >>> expected_calibration_error([0.9, 0.9, 0.1, 0.1], [True, True, False, False])
    0.1
    """
    if not confidences:
        return 0.0
    total, error = len(confidences), 0.0
    for index in range(bins):
        low, high = index / bins, (index + 1) / bins
        members = [
            (c, bool(y))
            for c, y in zip(confidences, labels, strict=True)
            if low <= c < high or (index == bins - 1 and c == 1.0)
        ]
        if members:
            mean_conf = sum(c for c, _ in members) / len(members)
            accuracy = sum(y for _, y in members) / len(members)
            error += len(members) / total * abs(mean_conf - accuracy)
    return round(error, 4)


def risk_coverage(
    confidences: Sequence[float], labels: Sequence[bool], *, points: Sequence[float] = ()
) -> list[tuple[float, float, float]]:
    """(threshold, coverage, risk) at each threshold: the share of answers given
    (confidence at least the threshold) and the share of those that are wrong."""
    thresholds = list(points) or [i / 10 for i in range(10)]
    rows = []
    for t in thresholds:
        kept = [bool(y) for c, y in zip(confidences, labels, strict=True) if c >= t]
        coverage = len(kept) / len(confidences) if confidences else 0.0
        risk = 1 - sum(kept) / len(kept) if kept else 0.0
        rows.append((t, round(coverage, 4), round(risk, 4)))
    return rows

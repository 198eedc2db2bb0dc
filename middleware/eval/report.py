"""Summaries of ``kgmw eval`` results: a Markdown table with bootstrap intervals, and plots.

>>> rows = [{"dataset": "d", "split": "dev", "method": "io", "hit": h, "error": None,
...          "llm_calls": 1, "prompt_tokens": 10, "completion_tokens": 2, "seconds": 0.5,
...          "sparql_queries": 0, "evidence_recall": None} for h in (True, False, True, True)]
>>> group = summarize(rows, seed=0)[0]
>>> group.questions, group.accuracy, group.evidence_recall
(4, 0.75, None)
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from middleware.errors import NotFound
from middleware.eval.abstention import Abstention, answerable
from middleware.eval.runner import RESULTS_FILE, RUNS_FILE, ResultsFile

BOOTSTRAP_SAMPLES = 1000
REPORT_FILE = "report.md"
ACCURACY_PLOT = "accuracy_by_method.png"
COST_PLOT = "accuracy_vs_calls.png"


@dataclass(frozen=True)
class GroupSummary:
    """The numbers of one (dataset, split, method). ``accuracy`` and its interval are
    over answerable questions (None without any); ``abstained`` over all."""

    dataset: str
    split: str
    method: str
    metric: str
    questions: int
    errors: int
    accuracy: float | None
    low: float | None
    high: float | None
    evidence_recall: float | None
    rouge_l: float | None
    llm_calls: float
    prompt_tokens: float
    completion_tokens: float
    sparql_queries: float
    p50_seconds: float
    p95_seconds: float
    cache_hits: int
    error_classes: dict[str, int]
    empty_answers: int = 0
    groundings: dict[str, int] = field(default_factory=dict)
    answerable: int = 0
    abstained: float = 0.0
    abstained_answerable: float | None = None
    abstained_by_kind: dict[str, float] = field(default_factory=dict)
    unanswerable_by_kind: dict[str, int] = field(default_factory=dict)


def bootstrap_interval(
    values: Sequence[float], *, seed: int, level: float = 0.95
) -> tuple[float, float]:
    """Bias-corrected and accelerated (BCa) bootstrap interval of the mean, by
    ``scipy.stats.bootstrap``: for a rate near 0 or 1 on few questions it is wider, and
    closer to right, than the plain percentile interval. Values that are all the same
    have no spread to resample; their interval is that value.

    >>> bootstrap_interval([1.0] * 10, seed=0)
    (1.0, 1.0)
    """
    if not values:
        return (0.0, 0.0)
    data = np.asarray(values, dtype=float)
    if np.all(data == data[0]):
        return (float(data[0]), float(data[0]))
    from scipy.stats import bootstrap  # scipy loads in a second; only reports need it

    found = bootstrap(
        (data,),
        np.mean,
        n_resamples=BOOTSTRAP_SAMPLES,
        confidence_level=level,
        method="BCa",
        random_state=seed,
    ).confidence_interval
    return (float(found.low), float(found.high))


def _mean(values: Iterable[float]) -> float:
    listed = list(values)
    return float(np.mean(listed)) if listed else 0.0


def summarize(records: Iterable[dict[str, Any]], *, seed: int) -> list[GroupSummary]:
    """One summary per (dataset, split, method), in the order groups first appear."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record["dataset"], record["split"], record["method"])].append(record)
    summaries = []
    for (dataset, split, method), rows in groups.items():
        hits = [1.0 if r.get("hit") else 0.0 for r in rows if answerable(r)]
        low, high = bootstrap_interval(hits, seed=seed) if hits else (None, None)
        abstention = Abstention()
        for r in rows:
            abstention.add(r)
        recalls = [
            1.0 if r["evidence_recall"] else 0.0
            for r in rows
            if r.get("evidence_recall") is not None
        ]
        rouges = [float(r["rouge_l"]) for r in rows if r.get("rouge_l") is not None]
        seconds = [float(r.get("seconds", 0.0)) for r in rows]
        classes: dict[str, int] = defaultdict(int)
        groundings: dict[str, int] = defaultdict(int)
        for r in rows:
            if r.get("error"):
                classes[r["error"]["class"]] += 1
            elif r.get("grounding"):
                groundings[r["grounding"]] += 1
        empty = sum(
            1 for r in rows if not r.get("error") and not (r.get("prediction") or "").strip()
        )
        summaries.append(
            GroupSummary(
                dataset=dataset,
                split=split,
                method=method,
                metric="choice accuracy" if any(r.get("choices") for r in rows) else "Hits@1",
                questions=len(rows),
                errors=sum(classes.values()),
                accuracy=_mean(hits) if hits else None,
                low=low,
                high=high,
                evidence_recall=_mean(recalls) if recalls else None,
                rouge_l=_mean(rouges) if rouges else None,
                llm_calls=_mean(r.get("llm_calls", 0) for r in rows),
                prompt_tokens=_mean(r.get("prompt_tokens", 0) for r in rows),
                completion_tokens=_mean(r.get("completion_tokens", 0) for r in rows),
                sparql_queries=_mean(r.get("sparql_queries", 0) for r in rows),
                p50_seconds=float(np.percentile(seconds, 50)) if seconds else 0.0,
                p95_seconds=float(np.percentile(seconds, 95)) if seconds else 0.0,
                cache_hits=sum(int(r.get("cache_hits", 0)) for r in rows),
                error_classes=dict(classes),
                empty_answers=empty,
                groundings=dict(groundings),
                answerable=abstention.answerable,
                abstained=abstention.rate,
                abstained_answerable=abstention.answerable_rate,
                abstained_by_kind=abstention.by_kind(),
                unanswerable_by_kind={k: n for k, (n, _) in abstention.kinds.items()},
            )
        )
    return summaries


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def markdown(summaries: Sequence[GroupSummary], runs: Sequence[dict[str, Any]]) -> str:
    """The report as Markdown: how it was run, the table, the plots, the failures."""
    lines = ["# Evaluation report", ""]
    models = sorted({str(r.get("model")) for r in runs})
    graphs = sorted({str(r.get("graph")) for r in runs})
    seeds = sorted({str(r.get("seed")) for r in runs})
    if runs:
        lines += [
            f"Model: {', '.join(models)}. Graph: {', '.join(graphs)}. Sample seed: {', '.join(seeds)}.",
            "",
        ]
    lines += [
        "Accuracy is Hits@1 for open questions and exact-choice accuracy for multiple choice, "
        "in percent, with a 95% bootstrap interval; failed questions count as wrong. Evidence "
        "recall: share of questions where a gold answer is among the evidence's entities (– for "
        'methods that use no graph). Abstained: share of questions answered "not found in the '
        'graph". Unanswerable questions have no accuracy; they count in the abstention '
        "table. Calls, tokens and queries are means per question; latency is wall time per "
        "question.",
        "",
        "| dataset | split | method | n | accuracy (95% CI) | abstained | evidence recall | ROUGE-L | LLM calls | prompt tok | completion tok | SPARQL | p50 s | p95 s | errors |",
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in summaries:
        rouge = "–" if s.rouge_l is None else f"{s.rouge_l:.3f}"
        accuracy = "–"
        if s.accuracy is not None:
            accuracy = f"{_percent(s.accuracy)} ({_percent(s.low)}–{_percent(s.high)})"
        lines.append(
            f"| {s.dataset} | {s.split} | {s.method} | {s.questions} | {accuracy} | "
            f"{_percent(s.abstained)} | {_percent(s.evidence_recall)} | {rouge} | {s.llm_calls:.2f} | "
            f"{s.prompt_tokens:.0f} | {s.completion_tokens:.0f} | {s.sparql_queries:.1f} | "
            f"{s.p50_seconds:.2f} | {s.p95_seconds:.2f} | {s.errors} |"
        )
    cached = [s for s in summaries if s.cache_hits]
    if cached:
        lines += [
            "",
            "Note: "
            + ", ".join(f"{s.dataset}/{s.method} {s.cache_hits}" for s in cached)
            + " LLM replies came from the cache, so those latencies are lower than uncached ones.",
        ]
    lines += _grounding_table(summaries)
    lines += _abstention_table(summaries)
    lines += [
        "",
        f"![Accuracy by method]({ACCURACY_PLOT})",
        "",
        f"![Accuracy against LLM calls]({COST_PLOT})",
    ]
    failing = [s for s in summaries if s.error_classes]
    if failing:
        lines += ["", "## Failures", ""]
        for s in failing:
            kinds = ", ".join(f"{k} × {v}" for k, v in sorted(s.error_classes.items()))
            lines.append(f"- {s.dataset}/{s.method}: {kinds}")
    return "\n".join(lines) + "\n"


def _finish(figure: Any, axes: Any, *, title: str, xlabel: str | None) -> Any:
    """Rates on a y axis from 0 to 1, whatever the data, so plots compare at a glance."""
    if xlabel:
        axes.set_xlabel(xlabel)
    axes.set_ylim(0.0, 1.0)
    axes.set_ylabel("accuracy (rate, 0 to 1)")
    axes.set_title(title)
    if axes.get_legend_handles_labels()[0]:  # none when no set had answerable questions
        axes.legend()
    figure.tight_layout()
    return figure


def accuracy_figure(summaries: Sequence[GroupSummary]) -> Any:
    """Grouped bars: one group per dataset (e.g. per hop count), one bar per method."""
    from matplotlib.figure import Figure

    summaries = [s for s in summaries if s.accuracy is not None]  # unanswerable sets have none
    datasets = list(dict.fromkeys(s.dataset for s in summaries))
    methods = list(dict.fromkeys(s.method for s in summaries))
    by_key = {(s.dataset, s.method): s for s in summaries}
    width = 0.8 / max(1, len(methods))
    figure = Figure(figsize=(max(6.0, 1.6 * len(datasets) + 2), 4.2))
    axes = figure.subplots()
    for index, method in enumerate(methods):
        xs, ys, below, above = [], [], [], []
        for position, dataset in enumerate(datasets):
            found = by_key.get((dataset, method))
            if found is None or found.accuracy is None or found.low is None or found.high is None:
                continue
            xs.append(position + (index - (len(methods) - 1) / 2) * width)
            ys.append(found.accuracy)
            below.append(found.accuracy - found.low)
            above.append(found.high - found.accuracy)
        axes.bar(xs, ys, width, label=method, yerr=[below, above], capsize=3)
    axes.set_xticks(range(len(datasets)), datasets)
    title = "Accuracy by method (95% bootstrap interval)"
    return _finish(figure, axes, title=title, xlabel=None)


def cost_figure(summaries: Sequence[GroupSummary]) -> Any:
    """One point per (dataset, method): mean LLM calls against accuracy."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 4.2))
    axes = figure.subplots()
    markers = "osD^vP*X"
    for index, method in enumerate(dict.fromkeys(s.method for s in summaries)):
        group = [s for s in summaries if s.method == method and s.accuracy is not None]
        points = [(s.llm_calls, s.accuracy or 0.0) for s in group]
        if not points:
            continue
        axes.scatter(*zip(*points, strict=True), marker=markers[index % 8], label=method)
        for s, point in zip(group, points, strict=True):
            axes.annotate(s.dataset, point, fontsize=7, xytext=(4, 2), textcoords="offset points")
    title = "Accuracy against LLM calls"
    return _finish(figure, axes, title=title, xlabel="LLM calls per question (mean)")


def _grounding_table(summaries: Sequence[GroupSummary]) -> list[str]:
    """Where the answers of graph methods came from, and how many were empty."""
    graph_groups = [s for s in summaries if set(s.groundings) - {"not-applicable"}]
    if not graph_groups:
        return []
    lines = [
        "",
        "Answers by grounding (questions that did not fail): from ranked paths, from the "
        "linked entities' neighbourhoods only, or with no graph evidence; and empty answers.",
        "",
        "| dataset | method | paths | neighbourhood | none | empty answer |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for s in graph_groups:
        g = s.groundings
        lines.append(
            f"| {s.dataset} | {s.method} | {g.get('paths', 0)} | {g.get('neighbourhood', 0)} | "
            f"{g.get('none', 0)} | {s.empty_answers} |"
        )
    return lines


def _abstention_table(summaries: Sequence[GroupSummary]) -> list[str]:
    """Abstention where there are unanswerable questions: right on those, per kind; a
    miss on the answerable ones, next to their Hits@1."""
    if not any(s.unanswerable_by_kind for s in summaries):
        return []
    kinds = list(dict.fromkeys(k for s in summaries for k in s.abstained_by_kind))
    lines = [
        "",
        "## Abstention",
        "",
        'Abstaining (answering "not found in the graph") is right on an unanswerable '
        "question (no gold answer: a made-up entity, a relation the entity lacks) and a miss "
        "on an answerable one. Shares in percent; n counts questions.",
        "",
        "| dataset | method | answerable n | Hits@1 | abstained (answerable) | unanswerable n | "
        + " | ".join(f"abstained ({k})" for k in kinds)
        + " | abstained (all) |",
        "|---|---|---:|---:|---:|---:|" + "---:|" * len(kinds) + "---:|",
    ]
    for s in summaries:
        by_kind = " | ".join(_percent(s.abstained_by_kind.get(k)) for k in kinds)
        lines.append(
            f"| {s.dataset} | {s.method} | {s.answerable} | {_percent(s.accuracy)} | "
            f"{_percent(s.abstained_answerable)} | {sum(s.unanswerable_by_kind.values())} | "
            f"{by_kind} | {_percent(s.abstained)} |"
        )
    return lines


def _plots(summaries: Sequence[GroupSummary], folder: Path) -> list[Path]:
    """The two plots as PNG files (matplotlib's Figure draws without a display)."""
    written = []
    for make, name in ((accuracy_figure, ACCURACY_PLOT), (cost_figure, COST_PLOT)):
        path = folder / name
        make(summaries).savefig(path, dpi=120)
        written.append(path)
    return written


def read_results(folders: Sequence[Path]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every record and every run note under ``folders``."""
    records: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    for folder in folders:
        path = folder / RESULTS_FILE
        if not path.is_file():
            raise NotFound(f"no {RESULTS_FILE} in {folder}", hint="run `kgmw eval --out` first")
        records += ResultsFile(path).read(repair=False).values()
        notes = folder / RUNS_FILE
        if notes.is_file():
            runs += [
                json.loads(line)
                for line in notes.read_text(encoding="utf-8").splitlines()
                if line.strip()
            ]
    return records, runs


def write_report(folders: Sequence[Path], out: Path, *, seed: int = 0) -> list[Path]:
    """Write report.md and the two plots into ``out``; return their paths."""
    records, runs = read_results(folders)
    if not records:
        raise NotFound(f"no result records in {', '.join(map(str, folders))}")
    summaries = summarize(records, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    plots = _plots(summaries, out)
    report = out / REPORT_FILE
    report.write_text(markdown(summaries, runs), encoding="utf-8")
    summary_json = out / "summary.json"
    summary_json.write_text(
        json.dumps([s.__dict__ for s in summaries], indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return [report, summary_json, *plots]

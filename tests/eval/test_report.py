"""Reports: the Markdown table with bootstrap intervals, the summary JSON and the plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from middleware.errors import NotFound
from middleware.eval.report import (
    accuracy_figure,
    bootstrap_interval,
    cost_figure,
    summarize,
    write_report,
)


def record(dataset: str, method: str, n: int, hit: bool, **extra: Any) -> dict[str, Any]:
    return {
        "key": f"{dataset}/dev/{method}/{n}",
        "dataset": dataset,
        "split": "dev",
        "method": method,
        "hit": hit,
        "error": None,
        "llm_calls": 4 if method == "rok" else 1,
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "sparql_queries": 5 if method == "rok" else 0,
        "seconds": float(n),
        "evidence_recall": (n % 2 == 0) if method == "rok" else None,
        "rouge_l": 1.0 if hit else 0.0,
        "choices": [],
        "grounding": "paths" if method == "rok" else "not-applicable",
        "prediction": "x",
        **extra,
    }


def results(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [record("metaqa-1hop", "rok", n, n < 6) for n in range(10)]
    rows += [record("metaqa-1hop", "io", n, n < 2) for n in range(10)]
    rows += [record("metaqa-2hop", "rok", n, n < 3) for n in range(10)]
    rows[-1] = {**rows[-1], "error": {"class": "LLMTimeout", "message": "slow"}, "hit": False}
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "runs.jsonl").write_text(
        json.dumps({"model": "gemma", "graph": "metaqa", "seed": 7}) + "\n"
    )
    return folder


def test_summary_numbers(tmp_path: Path) -> None:
    rows = [
        json.loads(line) for line in (results(tmp_path) / "results.jsonl").read_text().splitlines()
    ]
    first, io, hop2 = summarize(rows, seed=0)
    assert (first.method, first.questions, first.accuracy) == ("rok", 10, 0.6)
    assert first.low <= 0.6 <= first.high and first.low >= 0.2 and first.high <= 1.0
    assert first.evidence_recall == 0.5 and io.evidence_recall is None
    assert first.llm_calls == 4 and first.p50_seconds == 4.5
    assert first.p95_seconds == pytest.approx(8.55)
    assert hop2.errors == 1 and hop2.error_classes == {"LLMTimeout": 1}
    assert summarize(rows, seed=0) == summarize(rows, seed=0)


def test_bootstrap_interval_narrows_with_more_questions() -> None:
    small = bootstrap_interval([1.0, 0.0] * 10, seed=0)
    large = bootstrap_interval([1.0, 0.0] * 500, seed=0)
    assert small[0] < large[0] < 0.5 < large[1] < small[1]


def test_write_report(tmp_path: Path) -> None:
    out = tmp_path / "report"
    written = write_report([results(tmp_path / "run")], out)
    assert [p.name for p in written] == [
        "report.md",
        "summary.json",
        "accuracy_by_method.png",
        "accuracy_vs_calls.png",
    ]
    text = (out / "report.md").read_text()
    assert "Model: gemma. Graph: metaqa. Sample seed: 7." in text
    assert "| metaqa-1hop | dev | rok | 10 | 60.0 (" in text
    assert "| metaqa-1hop | dev | io | 10 | 20.0 (" in text and "| – |" in text
    assert "- metaqa-2hop/rok: LLMTimeout × 1" in text
    assert "| metaqa-1hop | rok | 10 | 0 | 0 | 0 |" in text
    for png in written[2:]:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert json.loads((out / "summary.json").read_text())[0]["accuracy"] == 0.6


def test_report_without_results(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match=r"no results\.jsonl"):
        write_report([tmp_path], tmp_path)


def test_plots_show_rates_from_zero_to_one(tmp_path: Path) -> None:
    lines = (results(tmp_path / "run") / "results.jsonl").read_text().splitlines()
    summaries = summarize((json.loads(line) for line in lines), seed=0)
    for figure in (accuracy_figure(summaries), cost_figure(summaries)):
        axes = figure.axes[0]
        assert axes.get_ylim() == (0.0, 1.0)
        assert "rate" in axes.get_ylabel()
    heights = [bar.get_height() for bar in accuracy_figure(summaries).axes[0].patches]
    assert heights and max(heights) <= 1.0 and 0.6 in heights


def test_bootstrap_interval_is_scipys_bias_corrected_one() -> None:
    from scipy.stats import bootstrap

    one_in_twenty = [1.0] + [0.0] * 19
    expected = bootstrap(
        ([*one_in_twenty],), np.mean, n_resamples=1000, method="BCa", random_state=3
    ).confidence_interval
    assert bootstrap_interval(one_in_twenty, seed=3) == (expected.low, expected.high)
    # the percentile interval would end at 0.15: too narrow for a rate this near 0
    assert bootstrap_interval(one_in_twenty, seed=3)[1] > 0.15
    # every answer right (or wrong): no spread to resample, the interval is the value
    assert bootstrap_interval([1.0] * 10, seed=0) == (1.0, 1.0)
    assert bootstrap_interval([0.0] * 10, seed=0) == (0.0, 0.0)
    assert bootstrap_interval([], seed=0) == (0.0, 0.0)


def unanswerable(method: str, n: int, kind: str, abstained: bool) -> dict[str, Any]:
    row = record("unanswerable-metaqa", method, n, False, evidence_recall=None, rouge_l=None)
    return {**row, "hit": None, "answerable": False, "abstained": abstained, "meta": {"kind": kind}}


def mixed(folder: Path) -> Path:
    """rok: 6 of 10 answerable right, 2 of them withheld; 3 of 4 made-up entities and
    1 of 4 absent relations withheld."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [record("metaqa-1hop", "rok", n, n < 6, abstained=n >= 8) for n in range(10)]
    rows += [unanswerable("rok", 10 + n, "made-up-entity", n < 3) for n in range(4)]
    rows += [unanswerable("rok", 20 + n, "absent-relation", n < 1) for n in range(4)]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_abstention_next_to_hits_and_unanswerable_questions_out_of_them(tmp_path: Path) -> None:
    rows = [
        json.loads(line) for line in (mixed(tmp_path) / "results.jsonl").read_text().splitlines()
    ]
    answerable, unanswerable_set = summarize(rows, seed=0)
    assert (answerable.accuracy, answerable.answerable, answerable.abstained) == (0.6, 10, 0.2)
    assert answerable.abstained_answerable == 0.2 and answerable.unanswerable_by_kind == {}
    assert unanswerable_set.accuracy is None and unanswerable_set.low is None
    assert unanswerable_set.abstained_by_kind == {"made-up-entity": 0.75, "absent-relation": 0.25}
    assert unanswerable_set.unanswerable_by_kind == {"made-up-entity": 4, "absent-relation": 4}
    assert unanswerable_set.abstained == 0.5 and unanswerable_set.abstained_answerable is None
    out = tmp_path / "report"
    write_report([tmp_path], out)
    text = (out / "report.md").read_text()
    assert "| metaqa-1hop | dev | rok | 10 | 60.0 (" in text and ") | 20.0 |" in text
    assert "| unanswerable-metaqa | dev | rok | 8 | – | 50.0 |" in text
    assert "| abstained (made-up-entity) | abstained (absent-relation) | abstained (all) |" in text
    assert "| metaqa-1hop | rok | 10 | 60.0 | 20.0 | 0 | – | – | 20.0 |" in text
    assert "| unanswerable-metaqa | rok | 0 | – | – | 8 | 75.0 | 25.0 | 50.0 |" in text
    summary = json.loads((out / "summary.json").read_text())
    assert (
        summary[1]["accuracy"] is None and summary[1]["abstained_by_kind"]["made-up-entity"] == 0.75
    )


def test_a_report_of_unanswerable_questions_only(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    rows = [unanswerable("io", n, "made-up-entity", n % 2 == 0) for n in range(4)]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    written = write_report([folder], folder)
    assert all(p.is_file() for p in written)
    assert (
        "| unanswerable-metaqa | io | 0 | – | – | 4 | 50.0 | 50.0 |"
        in (folder / "report.md").read_text()
    )
    plain = results(tmp_path / "plain")
    write_report([plain], plain)
    assert "## Abstention" not in (plain / "report.md").read_text()

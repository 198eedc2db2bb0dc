"""``kgmw calibrate``: fit each method's confidence to how often it is right, from
``kgmw eval`` results, and report the calibration error and risk-coverage."""

from __future__ import annotations

from pathlib import Path

import click

from middleware.cli.support import echo_json, print_table
from middleware.errors import BadRequest
from middleware.eval.calibrate import MIN_RECORDS, fit, merged, read_examples, skipped
from middleware.methods.calibration import SHIPPED, Calibration, load_calibration


@click.command("calibrate")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the calibration here (setting answer_calibration reads it); without it "
    "nothing is written.",
)
@click.option(
    "--base",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Start from this calibration (default: the shipped one) and replace only the "
    "methods fitted now; a method fitted again loses the base's per-profile models "
    "(name@profile) that were not fitted again.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def calibrate_command(
    results: tuple[Path, ...], out: Path | None, base: Path | None, as_json: bool
) -> None:
    """Fit confidence from the RESULTS of `kgmw eval` runs (folders or results.jsonl).

    Mix answerable and unanswerable questions (for example --dataset metaqa-1hop
    --dataset unanswerable-metaqa) and run with answer_relation_gap = true. The error
    and the risk-coverage rows are measured out of sample (two halves, each scored by
    the model fitted on the other).
    """
    examples = read_examples(results)
    if not examples:
        raise BadRequest(
            "no answers with a confidence basis in these results",
            hint="run kgmw eval with this version (records keep basis and answer_hit)",
        )
    fitted, reports = fit(examples)
    left_out = skipped(examples, reports)
    if not reports:
        raise BadRequest(
            "no method has enough answers to fit: " + "; ".join(left_out),
            hint=f"answer at least {MIN_RECORDS} questions per method",
        )
    start = load_calibration(str(base)) if base else load_calibration(None)
    calibration: Calibration = merged(start, fitted)
    dropped = sorted(set(start.models) - set(calibration.models))
    if out is not None:
        try:
            out.write_text(calibration.to_json(), encoding="utf-8")
        except OSError as err:
            raise BadRequest(f"cannot write {out}: {err.strerror}") from err
    if as_json:
        echo_json(
            {
                "reports": [r.to_dict() for r in reports],
                "skipped": left_out,
                "dropped": dropped,
                "written": str(out) if out else None,
            }
        )
        return
    rows = [
        (
            r.method,
            r.answers,
            f"{r.right / r.answers:.3f}",
            f"{r.ece:.3f}",
            f"{r.ece_before:.3f}",
            "  ".join(f"{t:.1f}:{c:.2f}/{k:.2f}" for t, c, k in r.rows[3:8]),
        )
        for r in reports
    ]
    print_table(
        ("METHOD", "ANSWERS", "RIGHT", "ECE", "ECE (RULE)", "THRESHOLD:COVERAGE/RISK"),
        rows,
        whole=(5,),
    )
    for line in left_out:
        click.echo(f"no model for {line}")
    for name in dropped:
        click.echo(f"dropped {name}: the base's, fitted on the answers of a method fitted again")
    where = out or "(not written: give --out)"
    click.echo(f"\ncalibration: {where}; shipped with the package: {SHIPPED}")

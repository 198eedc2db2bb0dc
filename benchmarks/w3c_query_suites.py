"""The W3C SPARQL 1.1 query evaluation tests, on the engine and through /sparql.

    ../.venv/bin/python w3c_query_suites.py --rdf-tests PATH [--on-disk] [--only TEXT] [--list]

PATH is a checkout (or extract) of https://github.com/w3c/rdf-tests. Every
``mf:QueryEvaluationTest`` and ``mf:CSVResultFormatTest`` of ``sparql/sparql11/*/``
runs twice over its data: on pyoxigraph's ``Store.query`` and through the service's
``/sparql`` (``create_app`` over the same store, the query POSTed). Each result is
compared with the expected one (``middleware/testing/w3c_results.py``). The list of
tests the engine passes and the proxy does not must be empty. With ``--on-disk`` each
test's store is written to a folder, so ``/sparql`` runs its query in an executor
process (slower). Exit status 1 when that list is not empty.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from common import save

from middleware.testing.w3c_queries import Verdict, run_suites


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rdf-tests", type=Path, required=True, help="a w3c/rdf-tests checkout")
    parser.add_argument("--on-disk", action="store_true", help="stores on disk: executors run")
    parser.add_argument("--only", default="", help="run the tests whose id holds this text")
    parser.add_argument("--list", action="store_true", help="print every test's verdicts")
    args = parser.parse_args()

    def show(verdict: Verdict) -> None:
        if args.list:
            print(f"{verdict.case.id}: engine {verdict.engine}; proxy {verdict.proxy}")

    started = time.perf_counter()
    report = run_suites(
        args.rdf_tests,
        on_disk=args.on_disk,
        only=lambda case: args.only in case.id,
        progress=show,
    )
    seconds = time.perf_counter() - started
    summary = report.summary()
    entailment = sum(v.case.entailment for v in report.verdicts)
    print(
        f"tests {summary['tests']}, run {summary['run']} ({entailment} ask for an "
        f"entailment regime, which Oxigraph does not evaluate), skipped "
        f"{len(report.skipped)} (need SERVICE endpoints)"
    )
    print(f"passed by the engine:     {summary['passed_by_engine']}")
    print(f"passed through the proxy: {summary['passed_through_proxy']}")
    print(f"proxy result spelled as the engine's: {summary['proxy_result_identical_to_engine']}")
    print(f"engine passes, proxy does not: {len(report.regressions)}")
    for verdict in report.regressions:
        print(f"  {verdict.case.id}: {verdict.proxy}")
    failed = report.engine_failures
    print(f"failed by the engine ({len(failed)}), entailment tests left out:")
    for name, why in failed.items():
        if not name.startswith("entailment/"):
            print(f"  {name}: {why}")
    print(f"{seconds:.1f} s")
    mode = "on-disk" if args.on_disk else "in-memory"
    path = save(f"w3c_query_suites_{mode}", {**summary, "seconds": seconds})
    print(f"written to {path}")
    return 1 if report.regressions else 0


if __name__ == "__main__":
    sys.exit(main())

"""The numbers of one method's answers over several rounds of the same ``kgmw eval``.

A p95 of 200 answers moves by a fifth from one run to the next on a busy 2-core
machine, more than the changes it is meant to show. Rounds of the same questions give
the p95 of each round, their median, and the p95 of each question's fastest round;
Hits@1 and the counts come from the first round, and ``same_answers`` says whether every
round gave the same predictions (the graph-side work is deterministic, so it should).

>>> one = [{"id": "q1", "seconds": 1.0, "llm_seconds": 0.5, "hit": True, "prediction": "a",
...         "sparql_queries": 4, "error": None}]
>>> two = [{**one[0], "seconds": 0.8}]
>>> numbers = method_numbers([one, two])
>>> numbers["p95_s_without_llm"], numbers["p95_s_each_round"], numbers["p95_s_fastest"]
(0.4, [0.5, 0.3], 0.3)
>>> numbers["hits_at_1"], numbers["same_answers"], numbers["rounds"]
(1.0, True, 2)
"""

from __future__ import annotations

from statistics import median
from typing import Any

from common import percentile


def _graph_side(record: dict[str, Any]) -> float:
    # a failed answer has no LLM time of its own (its error is counted apart)
    return max(0.0, float(record["seconds"]) - float(record.get("llm_seconds") or 0.0))


def method_numbers(rounds: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """One method's numbers from its records in each round (the same questions each)."""
    first = rounds[0]
    each = [round(percentile([_graph_side(r) for r in records], 95), 3) for records in rounds]
    fastest: dict[str, float] = {}
    for records in rounds:
        for r in records:
            fastest[r["id"]] = min(fastest.get(r["id"], float("inf")), _graph_side(r))
    predictions = [{r["id"]: r.get("prediction") for r in records} for records in rounds]
    errors = [str(r.get("error") or "") for r in first]
    answerable = [r for r in first if r.get("answerable", True)]
    graph_side = [_graph_side(r) for r in first]
    return {
        "questions": len(first),
        "rounds": len(rounds),
        "hits_at_1": round(sum(bool(r["hit"]) for r in answerable) / max(1, len(answerable)), 4),
        "p50_s_without_llm": round(percentile(graph_side, 50), 3),
        "p95_s_without_llm": round(median(each), 3),
        "p95_s_each_round": each,
        "p95_s_fastest": round(percentile(list(fastest.values()), 95), 3),
        "llm_p50_s": round(percentile([r.get("llm_seconds") or 0.0 for r in first], 50), 3),
        "sparql_queries_per_question": round(
            sum(r["sparql_queries"] for r in first) / max(1, len(first)), 1
        ),
        "timeouts": sum("timeout" in e or "timed out" in e for e in errors),
        "errors": sum(bool(e) for e in errors),
        "same_answers": all(p == predictions[0] for p in predictions[1:]),
    }

"""RoK retrieval time per question without LLM time, on MetaQA 2-hop dev questions.

    python benchmarks/bench_rok.py [--kb PATH] [--questions PATH] [--n 200] [--seed 7]

The full MetaQA KB is loaded into an in-memory store. A scripted LLM stands in for
the model: its key-entity list is the gold topic entity ("topic" scenario), or the
topic entity plus up to two gold answers, as a chain of thought that named the answer
would give ("topic+answers": this one exercises the pair search and PageRank). The
filter keeps facts 1 and 2. Time per question is the Answer's wall time minus its LLM
time; stage times come from its steps. Also reported: SPARQL queries per question and
retrieval recall (a gold answer among the evidence entities).
"""

from __future__ import annotations

import argparse
import random
import re
import time
from pathlib import Path

from common import DATASETS, percentile, save

from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.rok import RoK
from middleware.text.folding import fold
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

STAGES = ("link", "main_paths", "rank", "neighbours", "filter", "ground")


def read_questions(path: Path, n: int, seed: int) -> list[tuple[str, str, list[str]]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        question, answers = line.split("\t")
        topic = re.search(r"\[(.+?)\]", question)
        if topic:
            rows.append(
                (question.replace("[", "").replace("]", ""), topic.group(1), answers.split("|"))
            )
    return random.Random(seed).sample(rows, n)


def scripted(entities: list[str], answer: str) -> ScriptedLLM:
    return ScriptedLLM(
        [
            ("Key entities:$", "; ".join(entities)),
            ("Useful facts:$", "1, 2"),
            ("Answer:$", answer),
        ],
        default="Some reasoning about the question.",
    )


def evidence_names(answer: object, verbalizer: Verbalizer) -> set[str]:
    from middleware.methods.answer import Answer

    assert isinstance(answer, Answer)
    names = set()
    for triple in answer.evidence.all_triples():
        for term in (triple.subject, triple.object):
            names.add(fold(verbalizer.name(term)))
    return names


def run(
    store: LocalStore, questions: list[tuple[str, str, list[str]]], scenario: str
) -> dict[str, object]:
    totals: list[float] = []
    stages: dict[str, list[float]] = {s: [] for s in STAGES}
    queries: list[int] = []
    recall = 0
    grounding: dict[str, int] = {}
    verbalizer = Verbalizer(store)
    for question, topic, answers in questions:
        entities = [topic] + (answers[:2] if scenario == "topic+answers" else [])
        llm = scripted(entities, answers[0])
        answer = RoK(llm, store, linker=EntityLinker(store)).run(question)
        totals.append((answer.usage["seconds"] - answer.usage["llm_seconds"]) * 1000)
        queries.append(answer.usage["sparql_queries"])
        for step in answer.steps:
            if step.name in stages:
                stages[step.name].append(step.seconds * 1000)
        grounding[answer.grounding] = grounding.get(answer.grounding, 0) + 1
        if {fold(a) for a in answers} & evidence_names(answer, verbalizer):
            recall += 1
    result: dict[str, object] = {
        "questions": len(questions),
        "retrieval_ms_p50": round(percentile(totals, 50), 2),
        "retrieval_ms_p95": round(percentile(totals, 95), 2),
        "sparql_queries_p50": percentile([float(q) for q in queries], 50),
        "evidence_answer_recall": round(recall / len(questions), 3),
        "grounding": grounding,
        "stage_ms_p50": {s: round(percentile(v, 50), 2) for s, v in stages.items() if v},
        "stage_ms_p95": {s: round(percentile(v, 95), 2) for s, v in stages.items() if v},
    }
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=Path, default=DATASETS / "metaqa" / "kb.txt")
    parser.add_argument(
        "--questions", type=Path, default=DATASETS / "metaqa" / "2-hop" / "qa_dev.txt"
    )
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    store = LocalStore(profile="metaqa")
    started = time.perf_counter()
    store.load([args.kb])
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    EntityLinker(store).index()
    indexed = time.perf_counter() - started
    questions = read_questions(args.questions, args.n, args.seed)
    run(store, questions[:10], "topic")  # warm-up: label index, caches
    results: dict[str, object] = {
        "kb": str(args.kb),
        "questions_file": str(args.questions),
        "seed": args.seed,
        "load_seconds": round(loaded, 2),
        "label_index_seconds": round(indexed, 2),
    }
    for scenario in ("topic", "topic+answers"):
        results[scenario] = run(store, questions, scenario)
        print(scenario, results[scenario])
    print("saved", save("rok_retrieval", results))


if __name__ == "__main__":
    main()

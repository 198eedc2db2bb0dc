"""The same Freebase-shaped RDF in the embedded store and in Virtuoso: is the evidence
for WebQuestions questions identical, and how fast is each engine?

    python benchmarks/bench_virtuoso_identity.py [--limit 200] [--seed 7]

FB15k-237 (``kgmw load --recipe fb15k-237``) is written out as N-Triples in the shape
of a Freebase dump: names move from ``rdfs:label "x"`` to ``ns:type.object.name "x"@en``
(the recipe keeps rdfs:label; the freebase profile reads both). That one file is loaded
into an embedded store and bulk-loaded into a Virtuoso started like the test fixture
(tests/virtuoso_server.py, with no row cap or time limit in the way), read through
``SparqlEndpoint`` with the freebase profile and ``dialect: virtuoso``.

For the seeded in-graph WebQuestions sample (as ``answerable.py`` draws it), each
question's graph-side evidence is gathered on both engines from its topic entities (the
dataset gives Freebase mids, so no linking is involved): ``describe``, ``neighbors``
(cut at 100), the labels of those neighbours, the relation steps and the first walks of
the first steps (``plan``'s operations), and ``paths`` of at most 2 hops to the gold
answers' entities. A question's evidence is identical when every one of those sets is.
Label search (``kgmw link``) is compared apart: Virtuoso's ``bif:contains`` matches
words, the store's label index substrings, so it differs by design; it is also run
through the portable ``CONTAINS`` template on Virtuoso, the store's own semantics.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from common import DATASETS, free_port, save, summary

from middleware.errors import NotFound
from middleware.eval.datasets import load_dataset, sample
from middleware.eval.items import EvalItem
from middleware.eval.topics import answer_iris, in_graph, topic_iris
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.base import KnowledgeGraph
from middleware.kg.export import export_store
from middleware.kg.profiles import load_profile
from middleware.kg.recipes import recipe
from middleware.kg.terms import to_iri
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.qsm import QSM
from middleware.text.embeddings import HashEncoder
from middleware.text.linking import EntityLinker
from tests.virtuoso_server import start_virtuoso

LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
NAME = "<http://rdf.freebase.com/ns/type.object.name>"
_LABEL_LINE = re.compile(rf'^(\S+) {re.escape(LABEL)} ("(?:[^"\\]|\\.)*") \.$')


def dump_shape(source: Path, target: Path) -> int:
    """Copy N-Triples, each plain ``rdfs:label`` becoming an English
    ``ns:type.object.name`` as in a Freebase dump; the names moved."""
    moved = 0
    with source.open(encoding="utf-8") as lines, target.open("w", encoding="utf-8") as out:
        for line in lines:
            match = _LABEL_LINE.match(line.rstrip("\n"))
            if match:
                line = f"{match[1]} {NAME} {match[2]}@en .\n"
                moved += 1
            out.write(line)
    return moved


Evidence = dict[str, frozenset[Any]]


def evidence(graph: KnowledgeGraph, topics: list[str], answers: list[str]) -> Evidence:
    """The graph-side evidence of one question, as comparable sets per operation."""
    found: dict[str, set[Any]] = {op: set() for op in ("describe", "neighbors", "labels")}
    found |= {"steps": set(), "follow": set(), "paths": set()}
    for topic in topics:
        node = to_iri(topic)
        try:
            entity = graph.describe(node)
        except NotFound:  # a question's second topic may lie outside FB15k-237
            found["describe"].add((topic, "not found"))
            continue
        found["describe"].add((topic, entity.label, entity.aliases, entity.description))
        triples = graph.neighbors(node, limit=100)
        found["neighbors"] |= {t.key() for t in triples}
        named = {t.object for t in triples} | {t.subject for t in triples}
        found["labels"] |= {(str(k), v) for k, v in graph.labels(named).items()}
        steps = graph.relation_steps([node], limit=200)
        found["steps"] |= {(str(p), forward) for p, forward in steps}
        for step in steps[:3]:
            walks = graph.follow(node, (step,), limit=50)
            found["follow"] |= {w.key() for w in walks}
        for answer in answers[:3]:
            if answer != topic:
                walks = graph.paths(node, to_iri(answer), max_hops=2, limit=100)
                found["paths"] |= {w.key() for w in walks}
    return {op: frozenset(v) for op, v in found.items()}


def topic_name(store: KnowledgeGraph, topics: list[str]) -> str | None:
    """The name of the question's first topic entity the graph holds."""
    for topic in topics:
        try:
            return store.describe(to_iri(topic)).label
        except NotFound:
            continue
    return None


def link_key(graph: KnowledgeGraph, text: str) -> tuple[str, ...]:
    return tuple(str(e.iri) for e in graph.search(text, limit=10))


class LinkedBy(QSM):
    """QSM whose question is linked in ``linking``'s labels, whatever graph it reads."""

    def __init__(self, graph: KnowledgeGraph, linking: KnowledgeGraph) -> None:
        super().__init__(ScriptedLLM(default="unknown"), graph, encoder=HashEncoder())
        self.linking = linking

    def linker(self, graph: KnowledgeGraph) -> EntityLinker:
        return super().linker(self.linking)


def qsm_key(
    graph: KnowledgeGraph, question: str, linking: KnowledgeGraph | None
) -> frozenset[tuple[str, str, str]]:
    """QSM's evidence triples: it links the question's own words (no LLM; in
    ``linking`` when given), ranks the linked entities' neighbourhoods with the hash
    encoder; the scripted LLM answers."""
    if linking is None:
        method = QSM(ScriptedLLM(default="unknown"), graph, encoder=HashEncoder())
    else:
        method = LinkedBy(graph, linking)
    return frozenset(t.triple.key() for t in method.run(question).evidence.triples)


ENGINES = ("embedded", "virtuoso")  # the evidence compared
LINKS = ("virtuoso", "virtuoso_contains")  # label search: bif:contains, portable CONTAINS
QSMS = ("virtuoso", "virtuoso_contains")  # QSM linking its own way
SCAN = "virtuoso_scan"  # label_lookup: scan, seconds a question: the first --scan only


def difference(ours: Evidence, theirs: Evidence) -> dict[str, Any]:
    return {
        op: {
            "embedded_only": sorted(map(str, ours[op] - theirs[op]))[:3],
            "virtuoso_only": sorted(map(str, theirs[op] - ours[op]))[:3],
        }
        for op in ours
        if ours[op] != theirs[op]
    }


class Tally:
    """Latencies per engine and how often each engine agreed with the embedded store."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = {}
        self.same: dict[str, int] = {}

    def run(self, name: str, fn: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        result = fn()
        self.ms.setdefault(name, []).append((time.perf_counter() - started) * 1000)
        return result

    def agree(self, name: str, same: bool) -> None:
        self.same[name] = self.same.get(name, 0) + same

    def report(self, n: int) -> dict[str, Any]:
        return {
            "same_share": {k: round(v / n, 4) for k, v in self.same.items()} if n else {},
            "ms": {name: summary(v) for name, v in self.ms.items()},
        }


def compare(
    items: list[EvalItem], graphs: dict[str, KnowledgeGraph], *, scan: int
) -> dict[str, Any]:
    store = graphs["embedded"]
    evidence_tally, link_tally, qsm_tally = Tally(), Tally(), Tally()
    per_op: dict[str, int] = {}
    sizes: dict[str, int] = {}
    differing: list[dict[str, Any]] = []
    linked = 0
    for index, item in enumerate(items):
        topics = topic_iris(item, store.profile)
        answers = answer_iris(item, store)
        found = {
            name: evidence_tally.run(name, partial(evidence, graphs[name], topics, answers))
            for name in ENGINES
        }
        ours, theirs = found["embedded"], found["virtuoso"]
        for op, values in ours.items():
            sizes[op] = sizes.get(op, 0) + len(values)
            per_op[op] = per_op.get(op, 0) + (values == theirs[op])
        evidence_tally.agree("virtuoso", ours == theirs)
        if ours != theirs and len(differing) < 10:
            differing.append({"question": item.question, "ops": difference(ours, theirs)})
        name = topic_name(store, topics)
        if name:
            linked += 1
            mine = link_tally.run("embedded", partial(link_key, store, name))
            for engine in LINKS:
                link_tally.agree(
                    engine, mine == link_tally.run(engine, partial(link_key, graphs[engine], name))
                )
        mine = qsm_tally.run("embedded", partial(qsm_key, store, item.question, None))
        for engine in (*QSMS, SCAN) if index < scan else QSMS:
            own = qsm_tally.run(engine, partial(qsm_key, graphs[engine], item.question, None))
            qsm_tally.agree(engine, own == mine)
        same_linking = qsm_key(graphs["virtuoso"], item.question, store)
        qsm_tally.agree("virtuoso_linked_in_store", same_linking == mine)
    n = len(items)
    qsm = qsm_tally.report(n)
    qsm["same_share"].pop(SCAN, None)  # over fewer questions: in qsm_scan
    return {
        "questions": n,
        "identical_share": evidence_tally.report(n)["same_share"].get("virtuoso"),
        "identical_per_operation": {op: round(k / n, 4) for op, k in per_op.items()},
        "mean_items_per_operation": {op: round(k / n, 1) for op, k in sizes.items()},
        "evidence_ms": evidence_tally.report(n)["ms"],
        "link": {"questions": linked, **link_tally.report(linked)},
        "qsm": qsm,
        "qsm_scan": {
            "questions": min(n, scan),
            "same_share": round(qsm_tally.same.get(SCAN, 0) / min(n, scan), 4) if scan else None,
        },
        "differing": differing,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, default=DATASETS)
    parser.add_argument("--limit", type=int, default=200, help="questions (0: all)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--scan", type=int, default=20, help="questions QSM also links by label scan"
    )
    args = parser.parse_args()
    profile = load_profile("freebase")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        built = LocalStore(profile=profile)
        built.load(recipe("fb15k-237").paths(args.data_dir))
        plain, shaped = folder / "fb15k-237.nt", folder / "data" / "fb15k-237-dump.nt"
        shaped.parent.mkdir()
        export_store(built, "nt", plain)  # what kgmw export --format nt writes
        names = dump_shape(plain, shaped)
        store = LocalStore(profile=profile)
        store.load([shaped])
        started = time.perf_counter()
        virtuoso = start_virtuoso(
            [shaped], folder / "virtuoso", free_port, row_cap=1_000_000, time_limit=0
        )
        load_s = round(time.perf_counter() - started, 1)
        graphs: dict[str, KnowledgeGraph] = {
            "embedded": store,
            "virtuoso": SparqlEndpoint(
                virtuoso.url, profile=dataclasses.replace(profile, dialect="virtuoso"), timeout=120
            ),
            "virtuoso_contains": SparqlEndpoint(virtuoso.url, profile=profile, timeout=120),
            "virtuoso_scan": SparqlEndpoint(
                virtuoso.url, profile=dataclasses.replace(profile, label_lookup="scan"), timeout=120
            ),
        }
        try:
            data = load_dataset(
                "webquestions",
                split="test",
                data_dir=args.data_dir,
                keep=lambda item: in_graph(item, store),
            )
            items = sample(data.items, limit=args.limit or None, seed=args.seed)
            results = compare(items, graphs, scan=args.scan)
        finally:
            virtuoso.stop()
    results = {
        "limit": args.limit,
        "seed": args.seed,
        "names_moved_to_type_object_name": names,
        "virtuoso_load_s": load_s,
        "load_average_1min": round(os.getloadavg()[0], 2),
        **results,
    }
    print({k: v for k, v in results.items() if k != "differing"})
    print(f"saved {save('virtuoso_identity', results)}")


if __name__ == "__main__":
    main()

"""Several sources in one answer: FB15k-237 split in two servers, joined by P646 links.

    ../.venv/bin/python bench_cross_source.py [--store ~/kg/fb15k] [--limit 50]

1. Split: the FB15k-237 store (``--store``, else the recipe loaded into a temporary
   store) split by relation (a relation's half: the parity of its IRI's SHA-1). The
   Freebase half keeps Freebase IRIs and labels; the Wikidata half mints
   ``wd:Q<n>`` entities (numbered in IRI order), ``wdt:P<90000+n>`` relations labelled
   with their Freebase relation's label, ``rdfs:label`` names, and on every entity
   ``wdt:P646 "/m/0abc"`` (Wikidata's Freebase ID) naming its Freebase IRI.
2. Serving: the Freebase half bulk-loaded into Virtuoso (started as the test fixture
   does, ``tests/virtuoso_server.py``), the Wikidata half in ``oxigraph serve-read-only``.
3. Questions: WebQuestions test items whose topic entity is in the graph (seed 7),
   kept when a 2-hop path from a topic entity to a gold answer in the merged graph has
   its two hops in different halves; the first ``--limit`` such.
4. Methods ``qsm``, ``pg`` and ``plan`` over both halves at once (``split``), the same
   without the Wikidata half's ``same_as`` (``split, no links``: the halves meet only
   where labels match) and over the original store (``merged``), with the real MiniLM encoder and a scripted LLM
   (the draft names the topic entity only, verification keeps every trusted fact, the
   answer is the first fact's object), so the evidence is the graph part's doing.
   Evidence recall: a gold answer's name among the evidence triples' entity names.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import random
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from common import DATASETS, free_port, save
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Store

from middleware.config import Settings
from middleware.errors import MiddlewareError
from middleware.eval.datasets import load_dataset
from middleware.eval.metrics import evidence_recall
from middleware.eval.topics import answer_iris, in_graph, topic_iris
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.kg.base import KnowledgeGraph
from middleware.kg.profiles import load_profile
from middleware.kg.recipes import recipe
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import Answer
from middleware.methods.method import MethodBase
from middleware.methods.plan import Plan
from middleware.methods.pseudograph import PseudoGraph
from middleware.methods.qsm import QSM
from middleware.text.embeddings.factory import open_encoder
from tests.conftest import start_oxigraph
from tests.virtuoso_server import start_virtuoso

RDFS_LABEL = NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
FREEBASE = "http://rdf.freebase.com/ns/"
WD, WDT = "http://www.wikidata.org/entity/Q", "http://www.wikidata.org/prop/direct/P"
P646 = NamedNode(WDT + "646")
PROFILE = f"""name: wikidata-half
language: en
label_predicates: [rdfs:label]
ignore_predicates: [{P646.value}]
entity_prefix: {WD}
same_as:
  property: {P646.value}
  value: "/m/{{id}}"
  iri: "{FREEBASE}m.{{id}}"
"""


def wikidata_half(relation: NamedNode) -> bool:
    return hashlib.sha1(relation.value.encode()).digest()[0] % 2 == 1


def split(merged: LocalStore, folder: Path) -> tuple[Path, Path, dict[str, int]]:
    """The two halves as N-Triples files, and their sizes."""
    quads = list(merged.oxigraph.quads_for_pattern(None, None, None, None))
    labels = {q.subject: q.object for q in quads if q.predicate == RDFS_LABEL}
    edges = [q for q in quads if q.predicate != RDFS_LABEL and isinstance(q.object, NamedNode)]
    relations = sorted({q.predicate for q in edges}, key=lambda r: r.value)
    minted_p = {r: NamedNode(f"{WDT}{90000 + i}") for i, r in enumerate(relations)}
    fb = [q for q in edges if not wikidata_half(q.predicate)]
    wd = [q for q in edges if wikidata_half(q.predicate)]
    wd_nodes = sorted({n for q in wd for n in (q.subject, q.object)}, key=lambda n: n.value)
    minted_q = {n: NamedNode(f"{WD}{i + 1}") for i, n in enumerate(wd_nodes)}
    fb_out = Store()
    fb_nodes = {n for q in fb for n in (q.subject, q.object)}
    fb_out.extend(Quad(q.subject, q.predicate, q.object, DefaultGraph()) for q in fb)
    fb_out.extend(Quad(n, RDFS_LABEL, labels[n], DefaultGraph()) for n in fb_nodes if n in labels)
    wd_out = Store()
    wd_out.extend(
        Quad(minted_q[q.subject], minted_p[q.predicate], minted_q[q.object], DefaultGraph())
        for q in wd
    )
    for node, q in minted_q.items():
        wd_out.add(
            Quad(q, P646, Literal("/m/" + node.value.removeprefix(FREEBASE + "m.")), DefaultGraph())
        )
        if node in labels:
            wd_out.add(Quad(q, RDFS_LABEL, labels[node], DefaultGraph()))
    for relation, p in minted_p.items():
        name = labels.get(relation) or Literal(relation.value.rsplit("/", 1)[-1].replace(".", " "))
        wd_out.add(Quad(p, RDFS_LABEL, name, DefaultGraph()))
    fb_file, wd_file = folder / "freebase-half.nt", folder / "wikidata-half.nt"
    fb_out.dump(str(fb_file), RdfFormat.N_TRIPLES, from_graph=DefaultGraph())
    wd_out.dump(str(wd_file), RdfFormat.N_TRIPLES, from_graph=DefaultGraph())
    sizes = {
        "relations_freebase_half": len(relations) - sum(map(wikidata_half, relations)),
        "relations_wikidata_half": sum(map(wikidata_half, relations)),
        "edges_freebase_half": len(fb),
        "edges_wikidata_half": len(wd),
    }
    return fb_file, wd_file, sizes


def crossing(merged: LocalStore, item: Any) -> bool:
    """A 2-hop path from a topic entity to a gold answer with a hop in each half."""
    for topic in topic_iris(item, merged.profile):
        for gold in answer_iris(item, merged)[:5]:
            for path in merged.paths(topic, gold, max_hops=2, limit=50):
                halves = {wikidata_half(h.triple.predicate) for h in path.hops}
                if len(path.hops) == 2 and len(halves) == 2:
                    return True
    return False


def scripted(topic: str) -> ScriptedLLM:
    """Drafts only the topic entity, keeps every trusted fact, answers the first."""
    name = topic.replace("'", " ")
    draft = f"Cypher:\nCREATE (t {{name: '{name}'}})-[:RELATED_TO]->(x {{name: 'unknown'}})"

    def verify(prompt: str) -> str:
        trusted = prompt.rsplit("Trusted facts:", 1)[1].split("Draft:", 1)[0]
        return "\n".join(line for line in trusted.splitlines() if line.count("|") == 2)

    def answer(prompt: str) -> str:
        found = re.search(r"\| [^|\n]+ \| ([^\n]+)", prompt.rsplit("Facts:", 1)[-1])
        return "{" + (found.group(1).strip() if found else "unknown") + "}"

    return ScriptedLLM([("Plan:$", draft), ("Fixed facts:$", verify), ("Answer:$", answer)])


def evidence_names(answer: Answer, graphs: dict[str, KnowledgeGraph]) -> list[str]:
    names: list[str] = []
    for triple in answer.evidence.all_triples():
        graph = graphs[triple.source or ""]
        for term in (triple.subject, triple.object):
            names.append(term.value)
        names += list(graph.labels([triple.subject, triple.object]).values())
    return names


def method(name: str, llm: ScriptedLLM, encoder: Any) -> MethodBase:
    if name == "qsm":
        return QSM(llm, encoder=encoder)
    if name == "pg":
        return PseudoGraph(llm, encoder=encoder)
    return Plan(llm, encoder=encoder)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", help="an FB15k-237 store (default: load the recipe)")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cross-"))
    if args.store:
        merged = LocalStore(args.store, read_only=True, name="merged")
    else:
        chosen = recipe("fb15k-237")
        merged = LocalStore(
            folder / "merged", profile=chosen.profile, progress=False, name="merged"
        )
        merged.load(list(chosen.paths(DATASETS)))
    started = time.perf_counter()
    fb_file, wd_file, sizes = split(merged, folder)
    sizes["split_seconds"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    virtuoso = start_virtuoso(
        [fb_file], folder / "virtuoso", free_port, row_cap=1_000_000, time_limit=0, buffers=100_000
    )
    sizes["virtuoso_load_seconds"] = round(time.perf_counter() - started, 1)
    wd_url, wd_process = start_oxigraph(wd_file, folder / "oxigraph")
    (folder / "wikidata-half.yaml").write_text(PROFILE, encoding="utf-8")
    try:
        fb_profile = dataclasses.replace(load_profile("freebase"), dialect="virtuoso")
        freebase = SparqlEndpoint(virtuoso.url, profile=fb_profile, name="freebase", timeout=60)
        wikidata = SparqlEndpoint(
            wd_url, profile=str(folder / "wikidata-half.yaml"), name="wikidata", timeout=60
        )
        unlinked = SparqlEndpoint(
            wd_url,
            profile=dataclasses.replace(wikidata.profile, same_as=None),
            name="wikidata",
            timeout=60,
        )
        graphs: dict[str, KnowledgeGraph] = {
            "freebase": freebase,
            "wikidata": wikidata,
            "merged": merged,
        }
        data = load_dataset(
            "webquestions", split="test", data_dir=DATASETS, keep=lambda i: in_graph(i, merged)
        )
        pool = list(data.items)
        random.Random(args.seed).shuffle(pool)
        items = []
        scanned = 0
        for item in pool:
            scanned += 1
            if crossing(merged, item):
                items.append(item)
            if len(items) >= args.limit:
                break
        encoder = open_encoder(Settings.build({"progress": False}))
        rows: dict[str, dict[str, Any]] = {}
        for name in ("qsm", "pg", "plan"):
            for setup, sources in (
                ("split", [freebase, wikidata]),
                ("split, no links", [freebase, unlinked]),
                ("merged", [merged]),
            ):
                recalled = errors = crossed = 0
                seconds = 0.0
                for item in items:
                    topic = merged.labels([NamedNode(topic_iris(item, merged.profile)[0])])
                    llm = scripted(next(iter(topic.values()), item.question))
                    began = time.perf_counter()
                    try:
                        answer = method(name, llm, encoder).run(item.question, sources=sources)
                    except MiddlewareError:
                        errors += 1
                        continue
                    seconds += time.perf_counter() - began
                    recalled += evidence_recall(item.answers, evidence_names(answer, graphs))
                    crossed += len({t.source for t in answer.evidence.all_triples()}) == 2
                rows[f"{name} {setup}"] = {
                    "evidence_recall": round(recalled / max(1, len(items)), 3),
                    "answers_with_evidence_from_both": crossed,
                    "errors": errors,
                    "seconds_per_question": round(seconds / max(1, len(items)), 2),
                }
                print(name, setup, rows[f"{name} {setup}"], flush=True)
        save(
            "cross_source",
            {"sizes": sizes, "questions": len(items), "scanned": scanned, "rows": rows},
        )
    finally:
        wd_process.terminate()
        virtuoso.stop()


if __name__ == "__main__":
    main()

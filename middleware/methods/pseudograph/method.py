"""Pseudo-graph generation and atomic knowledge verification, over one graph or several.

1. ``draft`` (LLM call 1): a short plan and Cypher for what the model believes; parsed
   into pseudo-triples (``methods/cypher.py``).
2. ``link`` and ``base_graph``: the pseudo-graph's names (and the question's spans)
   linked in every source; the linked entities' 1-hop neighbourhoods, tagged with
   their source, form the base graph. A failing source is reported and skipped.
3. ``encode`` and ``match``: pseudo-triples and base triples verbalized and embedded;
   each pseudo-triple keeps its ``top_matches`` most similar base triples per source.
4. ``prune``: per source, the top-k subjects by matched triples (k = the pseudo-graph's
   subject count), then those whose mean cosine reaches ``threshold``, best first;
   the sources' ground graphs are merged by score.
5. ``verify`` (LLM call 2): the draft rewritten against the ground graph.
6. ``answer`` (LLM call 3): the answer from the fixed graph, grounded to IRIs.

>>> from middleware.text.embeddings import HashEncoder
>>> from middleware.kg.backends.local import LocalStore
>>> from middleware.llm.scripted import ScriptedLLM
>>> kg = LocalStore(profile="metaqa", name="films")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|release_year|1995\\n", name="kb.txt")
>>> llm = ScriptedLLM([("Plan:$", "who directed it\\nCypher:\\nCREATE (h {name: 'Heat'})-[:DIRECTED_BY]->(m {name: 'Michael Mann'})"),
...                    ("Fixed facts:$", "Heat | directed by | Michael Mann"),
...                    ("Answer:$", "{Michael Mann}")])
>>> answer = PseudoGraph(llm, kg, encoder=HashEncoder(), config=PseudoGraphSettings(threshold=0.3)).run("Who directed Heat?")
>>> answer.answer, answer.usage["llm_calls"], [e.label for e in answer.entities]
('Michael Mann', 3, ['Michael Mann'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from middleware.config.methods import PseudoGraphSettings
from middleware.kg.base import KnowledgeGraph
from middleware.kg.terms import Term
from middleware.llm.base import LLM
from middleware.llm.prompt_templates import render
from middleware.methods.answer import Answer, Evidence, EvidenceTriple, Grounding
from middleware.methods.collect import (
    BaseTriple,
    LinkedName,
    ask_names,
    link_names,
    link_question,
    neighbourhood,
    top_matches,
)
from middleware.methods.fan_out import SourceFailure, fan_out
from middleware.methods.links import cross_link, merge_entities
from middleware.methods.method import MethodBase
from middleware.methods.pseudograph.cypher import CypherGraph, parse_cypher
from middleware.methods.pseudograph.facts import answer_in_braces, fact_key, parse_fact_lines
from middleware.methods.pseudograph.pruning import GroundEntity, Match, Pruning, prune
from middleware.methods.run import PriorEvidence, Run
from middleware.methods.steps import Candidates, final_answer, finish, ground
from middleware.methods.with_plan import PlanningStage
from middleware.text.embeddings.encoders import Encoder
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer


@dataclass
class SourceBase:
    """One source's share: its linked entities and base graph."""

    graph: KnowledgeGraph
    linker: EntityLinker
    verbalizer: Verbalizer
    linked: list[LinkedName]
    unlinked: list[str]
    base: list[BaseTriple]


class PseudoGraph(MethodBase):
    """Pseudo-graph generation with atomic verification (``pg``); any number of sources."""

    name = "pg"

    def __init__(
        self,
        llm: LLM,
        graph: KnowledgeGraph | None = None,
        *,
        encoder: Encoder,
        config: PseudoGraphSettings | None = None,
        **shared: Any,
    ) -> None:
        super().__init__(llm, graph, **shared)
        self.encoder = encoder
        self.config = config or PseudoGraphSettings()

    def answer(self, run: Run, planning: PlanningStage | None = None) -> Answer:
        prior = planning.prior() if planning is not None else None  # pg+plan: walks first
        return _PseudoGraphRun(self, run).answer(prior)


class _PseudoGraphRun:
    def __init__(self, method: PseudoGraph, run: Run) -> None:
        self.method = method
        self.config = method.config
        self.run = run
        self.question = run.question

    def answer(self, prior: PriorEvidence | None) -> Answer:
        pseudo = self.draft()
        sources = self.collect(pseudo)
        queries = [t.text() for t in pseudo.triples]
        if not queries:
            self.run.warn("the draft holds no fact; the question itself is matched instead")
        if not queries or self.config.question_query:
            queries.append(self.question)
        query_vectors, base_vectors = self.encode(queries, sources)
        k = max(len(pseudo.subjects), 1)
        ground_graph = self.match_and_prune(sources, query_vectors, base_vectors, k)
        fixed, verified = self.verify(pseudo, ground_graph)
        evidence = Evidence(triples=verified)
        grounding: Grounding = "neighbourhood" if verified else "none"
        if not verified:
            self.run.warn(
                "no fact from the graphs survived verification; the answer is not grounded"
            )
        text = final_answer(
            self.run, fixed, evidence, prompt="pg_answer", parse=answer_in_braces, prior=prior
        )
        entities = ground(self.run, text, self.candidates(sources, ground_graph), prior=prior)
        entities = merge_entities(self.run, [s.graph for s in sources], entities)
        return finish(
            self.run, text, entities=entities, evidence=evidence, grounding=grounding, prior=prior
        )

    # -- call 1 -------------------------------------------------------------------------
    def draft(self) -> CypherGraph:
        with self.run.step("draft") as step:
            reply = self.run.complete(step, render("pg_draft", question=self.question)).text
            pseudo = parse_cypher(reply)
            step.parsed = pseudo.to_dict()
        return pseudo

    # -- linking and base graphs per source ------------------------------------------------
    def collect(self, pseudo: CypherGraph) -> list[SourceBase]:
        config = self.config

        def link(graph: KnowledgeGraph) -> SourceBase:
            linker = self.method.linker(graph)
            linked = link_question(linker, self.question)
            from_draft, unlinked = link_names(linker, pseudo.names, per_name=config.link_candidates)
            seen = {n.entity.iri for n in linked}
            linked += [n for n in from_draft if n.entity.iri not in seen]
            verbalizer = self.method.verbalizer(graph)
            return SourceBase(
                graph, linker, verbalizer, linked[: config.max_entities], unlinked, []
            )

        with self.run.step("link") as step:
            linked = fan_out(self.run.graphs, link)
            step.parsed = {
                s.graph.name: {"linked": [n.to_dict() for n in s.linked], "unlinked": s.unlinked}
                for _, s in linked.results
            }
            for graph, share in linked.results:
                ask_names(run=self.run, names=share.linked, source=graph.name, step=step)
            self._report(linked.failures, step)

        extra = cross_link(
            self.run,
            [g for g, _ in linked.results],
            {g.name: [n.entity.iri for n in s.linked] for g, s in linked.results},
        )

        def base_graph(graph: KnowledgeGraph) -> list[BaseTriple]:
            share = next(s for g, s in linked.results if g is graph)
            iris = [n.entity.iri for n in share.linked] + extra[graph.name]
            return neighbourhood(
                graph,
                iris,
                per_entity=config.neighbors_per_entity,
                verbalizer=share.verbalizer,
                cuts=cuts,
                setting="pg_neighbors_per_entity",
            )

        cuts: list[str] = []
        with self.run.step("base_graph") as step:
            gathered = fan_out([g for g, _ in linked.results], base_graph)
            step.notes += cuts
            for graph, triples in gathered.results:
                next(s for g, s in linked.results if g is graph).base = triples
            step.parsed = {g.name: len(t) for g, t in gathered.results}
            self._report(gathered.failures, step)
        answering = {id(g) for g, _ in gathered.results}
        return [s for g, s in linked.results if id(g) in answering]

    def _report(self, failures: list[SourceFailure], step: Any) -> None:
        for failure in failures:
            self.run.warn(f"{failure}; answered from the other sources", step)

    # -- embeddings, matching, pruning --------------------------------------------------------
    def encode(self, queries: list[str], sources: list[SourceBase]) -> tuple[Any, list[Any]]:
        with self.run.step("encode") as step:
            texts = [b.text for s in sources for b in s.base]
            vectors = self.method.encoder.encode([*queries, *texts])
            query_vectors, rest = vectors[: len(queries)], vectors[len(queries) :]
            per_source, at = [], 0
            for share in sources:
                per_source.append(rest[at : at + len(share.base)])
                at += len(share.base)
            step.parsed = {"queries": len(queries), "base_triples": len(texts)}
        return query_vectors, per_source

    def match_and_prune(
        self, sources: list[SourceBase], queries: Any, bases: list[Any], k: int
    ) -> list[GroundEntity]:
        results: list[Pruning] = []
        with self.run.step("match") as step:
            matches: list[list[Match]] = []
            for share, vectors in zip(sources, bases, strict=True):
                found = top_matches(queries, vectors, k=self.config.top_matches)
                matches.append(
                    [
                        Match(q, share.base[i], score)
                        for q, hits in enumerate(found)
                        for i, score in hits
                    ]
                )
            step.parsed = {s.graph.name: len(m) for s, m in zip(sources, matches, strict=True)}
        with self.run.step("prune") as step:
            for source_matches in matches:
                results.append(prune(source_matches, k=k, threshold=self.config.threshold))
            ground = sorted((g for r in results for g in r.kept), key=lambda g: -g.score)
            step.parsed = {
                "k": k,
                "threshold": self.config.threshold,
                "sources": {
                    s.graph.name: r.to_dict() for s, r in zip(sources, results, strict=True)
                },
                "ground_graph": [g.label for g in ground],
            }
            fallback: list[GroundEntity] = []
            if not ground and self.config.min_ground:
                pool = [g for r in results for g in (*r.below_threshold, *r.unpopular)]
                fallback = sorted(pool, key=lambda g: (-g.score, g.first_seen))
                ground = fallback[: self.config.min_ground]
            step.parsed["threshold_fallback"] = bool(fallback)
            if fallback:
                step.parsed["ground_graph"] = [g.label for g in ground]
                self.run.warn(
                    f"no entity reached the {self.config.threshold:g} similarity threshold; "
                    f"verifying against the {len(ground)} best by mean cosine (pg_min_ground)",
                    step,
                )
            elif not ground:
                self.run.warn(
                    f"no entity reached the {self.config.threshold:g} similarity threshold; "
                    "the ground graph is empty",
                    step,
                )
        return ground

    # -- calls 2 and 3 ------------------------------------------------------------------------
    def verify(
        self, pseudo: CypherGraph, ground: list[GroundEntity]
    ) -> tuple[list[str], list[EvidenceTriple]]:
        if not ground:
            # nothing in the graphs backs the draft, so none of it is kept (the answer
            # prompt then says nothing was found and the model answers on its own)
            return [], []
        lines: list[str] = []
        by_key: dict[str, BaseTriple] = {}  # each ground triple by its parts' key
        for number, group in enumerate(ground, start=1):
            lines.append(
                f"[{number}] {group.label}" + (f" ({group.source})" if group.source else "")
            )
            for base, _ in group.triples:
                lines.append(base.text)
                by_key.setdefault(fact_key(*base.parts), base)
        with self.run.step("verify") as step:
            prompt = render(
                "pg_verify",
                question=self.question,
                ground=lines,
                draft=[t.text() for t in pseudo.triples],
            )
            facts = parse_fact_lines(self.run.complete(step, prompt).text)
            if facts:
                fixed = [" | ".join(f) for f in facts]
                verified = list(
                    dict.fromkeys(by_key[fact_key(*f)] for f in facts if fact_key(*f) in by_key)
                )
            else:
                self.run.warn(
                    "the verification reply held no fact; the ground graph is used as is", step
                )
                verified = list(dict.fromkeys(b for g in ground for b, _ in g.triples))
                fixed = [b.text for b in verified]
            step.parsed = {"fixed": fixed, "from_graph": [b.text for b in verified]}
        return fixed, [EvidenceTriple(b.triple, b.text, "verified") for b in verified]

    def candidates(
        self, sources: list[SourceBase], ground_graph: list[GroundEntity]
    ) -> list[Candidates]:
        """Per source: its linked entities and its ground-graph triples' nodes."""
        found = []
        for share in sources:
            nodes: list[Term] = [n.entity.iri for n in share.linked]
            nodes += [
                t
                for g in ground_graph
                if g.source == share.graph.name
                for b, _ in g.triples
                for t in (b.triple.subject, b.triple.object)
            ]
            found.append(Candidates(share.graph, share.linker, nodes, share.verbalizer))
        return found

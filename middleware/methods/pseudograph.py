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
>>> answer = PseudoGraph(llm, kg, encoder=HashEncoder(), config=PseudoGraphConfig(threshold=0.3)).run("Who directed Heat?")
>>> answer.answer, answer.usage["llm_calls"], [e.label for e in answer.entities]
('Michael Mann', 3, ['Michael Mann'])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pyoxigraph import NamedNode

from middleware.config.methods import PseudoGraphSettings
from middleware.kg.base import KnowledgeGraph
from middleware.kg.terms import Term
from middleware.llm.base import LLM
from middleware.llm.templates import render
from middleware.methods.base import (
    Answer,
    AnswerEntity,
    Evidence,
    EvidenceTriple,
    Grounding,
    MethodBase,
    Run,
    clean_answer,
)
from middleware.methods.cypher import CypherGraph, parse_cypher
from middleware.methods.grounding import ground_answer
from middleware.methods.pruning import GroundEntity, Match, Pruning, prune
from middleware.methods.semantic import (
    BaseTriple,
    LinkedName,
    link_names,
    link_question,
    neighbourhood,
    top_matches,
)
from middleware.methods.sources import SourceFailure, fan_out
from middleware.text.embeddings.encoders import Encoder
from middleware.text.folding import fold
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

_BRACES = re.compile(r"\{([^{}\n]+)\}")


PseudoGraphConfig = PseudoGraphSettings  # the old name of the settings table


@dataclass
class SourceBase:
    """One source's share: its linked entities and base graph."""

    graph: KnowledgeGraph
    linker: EntityLinker
    verbalizer: Verbalizer
    linked: list[LinkedName]
    unlinked: list[str]
    base: list[BaseTriple]


def parse_fact_lines(text: str) -> list[tuple[str, str, str]]:
    """Facts written one per line as ``s | r | o`` (or ``<s> <r> <o>``).

    >>> parse_fact_lines("Heat | directed by | Michael Mann\\n<Heat> <year> <1995>\\nnoise")
    [('Heat', 'directed by', 'Michael Mann'), ('Heat', 'year', '1995')]
    """
    facts: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        line = line.strip().lstrip("-*• ").strip()
        parts = (
            [p.strip() for p in line.split("|")] if "|" in line else re.findall(r"<([^<>]+)>", line)
        )
        if len(parts) > 3:
            parts = [parts[0], " | ".join(parts[1:-1]), parts[-1]]
        if len(parts) == 3 and all(parts):
            facts.append((parts[0], parts[1], parts[2]))
    return facts


def answer_in_braces(text: str) -> str:
    """The braced answer, else the cleaned first line.

    >>> answer_in_braces("Based on the facts it is {Lake Superior}."), answer_in_braces("Paris.")
    ('Lake Superior', 'Paris')
    """
    found = _BRACES.search(text)
    return found.group(1).strip() if found else clean_answer(text)


class PseudoGraph(MethodBase):
    """Pseudo-graph generation with atomic verification (``pg``); any number of sources."""

    name = "pg"

    def __init__(
        self,
        llm: LLM,
        graph: KnowledgeGraph | None = None,
        *,
        encoder: Encoder,
        config: PseudoGraphConfig | None = None,
        fuzzy_cutoff: float = 85.0,
        literal_max_chars: int = 80,
    ) -> None:
        super().__init__(llm, graph)
        self.encoder = encoder
        self.config = config or PseudoGraphConfig()
        self.fuzzy_cutoff = fuzzy_cutoff
        self.literal_max_chars = literal_max_chars

    def answer(self, run: Run) -> Answer:
        return _PseudoGraphRun(self, run).answer()


class _PseudoGraphRun:
    def __init__(self, method: PseudoGraph, run: Run) -> None:
        self.method = method
        self.config = method.config
        self.run = run
        self.question = run.question

    def answer(self) -> Answer:
        pseudo = self.draft()
        sources = self.collect(pseudo)
        queries = [t.text() for t in pseudo.triples]
        if not queries:
            self.run.warn("the draft holds no fact; the question itself is matched instead")
        if not queries or self.config.question_query:
            queries.append(self.question)
        query_vectors, base_vectors = self.encode(queries, sources)
        k = max(len(pseudo.subjects), 1)
        ground = self.match_and_prune(sources, query_vectors, base_vectors, k)
        fixed, verified = self.verify(pseudo, ground)
        text = self.final(fixed)
        entities = self.ground(text, sources, ground)
        evidence = Evidence(triples=verified)
        grounding: Grounding = "neighbourhood" if verified else "none"
        if not verified:
            self.run.warn(
                "no fact from the graphs survived verification; the answer is not grounded"
            )
        return self.run.finish(text, grounding=grounding, entities=entities, evidence=evidence)

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
            linker = EntityLinker(graph, fuzzy_cutoff=self.method.fuzzy_cutoff)
            linked = link_question(linker, self.question)
            from_draft, unlinked = link_names(linker, pseudo.names, per_name=config.link_candidates)
            seen = {n.entity.iri for n in linked}
            linked += [n for n in from_draft if n.entity.iri not in seen]
            verbalizer = Verbalizer(graph, literal_max_chars=self.method.literal_max_chars)
            return SourceBase(
                graph, linker, verbalizer, linked[: config.max_entities], unlinked, []
            )

        with self.run.step("link") as step:
            linked = fan_out(self.run.graphs, link)
            step.parsed = {
                s.graph.name: {"linked": [n.to_dict() for n in s.linked], "unlinked": s.unlinked}
                for _, s in linked.results
            }
            self._report(linked.failures, step)

        def base_graph(graph: KnowledgeGraph) -> list[BaseTriple]:
            share = next(s for g, s in linked.results if g is graph)
            iris = [n.entity.iri for n in share.linked]
            return neighbourhood(
                graph, iris, per_entity=config.neighbors_per_entity, verbalizer=share.verbalizer
            )

        with self.run.step("base_graph") as step:
            gathered = fan_out([g for g, _ in linked.results], base_graph)
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
            if not ground:
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
        by_text: dict[str, BaseTriple] = {}
        for number, group in enumerate(ground, start=1):
            lines.append(
                f"[{number}] {group.label}" + (f" ({group.source})" if group.source else "")
            )
            for base, _ in group.triples:
                lines.append(base.text)
                by_text.setdefault(_fact_key(*base.text.split(" | ", 2)), base)
        with self.run.step("verify") as step:
            prompt = render(
                "pg_verify",
                question=self.question,
                ground=lines,
                draft=[t.text() for t in pseudo.triples],
            )
            facts = parse_fact_lines(self.run.complete(step, prompt).text)
            if not facts:
                self.run.warn(
                    "the verification reply held no fact; the ground graph is used as is", step
                )
                facts = [tuple(b.text.split(" | ", 2)) for g in ground for b, _ in g.triples]  # type: ignore[misc]
            fixed = [" | ".join(f) for f in facts]
            verified = list(
                dict.fromkeys(by_text[_fact_key(*f)] for f in facts if _fact_key(*f) in by_text)
            )
            step.parsed = {"fixed": fixed, "from_graph": [b.text for b in verified]}
        return fixed, [EvidenceTriple(b.triple, b.text, "verified") for b in verified]

    def final(self, fixed: list[str]) -> str:
        with self.run.step("answer") as step:
            if self.run.choices:
                prompt = render("choice_answer", question=self.question, facts=fixed)
                text = self.run.choose(step, prompt, self.run.choices).option
            else:
                prompt = render("pg_answer", question=self.question, facts=fixed)
                text = answer_in_braces(self.run.complete(step, prompt).text)
            step.parsed = text
        if not text:
            self.run.warn("the model gave an empty answer", step)
        return text

    def ground(
        self, text: str, sources: list[SourceBase], ground: list[GroundEntity]
    ) -> list[AnswerEntity]:
        if not text or not sources:
            return []
        with self.run.step("ground") as step:
            entities: list[AnswerEntity] = []
            for share in sources:
                nodes: list[Term] = [n.entity.iri for n in share.linked]
                nodes += [
                    t
                    for g in ground
                    if g.source == share.graph.name
                    for b, _ in g.triples
                    for t in (b.triple.subject, b.triple.object)
                ]
                iris = [n for n in dict.fromkeys(nodes) if isinstance(n, NamedNode)]
                share.verbalizer.prepare(iris)
                candidates = {iri: (share.verbalizer.name(iri), share.graph.name) for iri in iris}
                entities += ground_answer(text, self.question, candidates, linker=share.linker)
            step.parsed = [e.to_dict() for e in entities]
        return entities


def _fact_key(subject: str, relation: str, obj: str) -> str:
    return "|".join(fold(part) for part in (subject, relation, obj))

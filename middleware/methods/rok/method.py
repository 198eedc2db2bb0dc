"""RoK: reasoning on efficient knowledge paths, in at most four LLM calls.

1. ``expand``: the LLM reasons about the question step by step (call 1);
2. ``extract``: it lists the key entities of question and reasoning (call 2);
3. ``link``: they are linked to the graph, question mentions first;
4. ``main_paths``: all paths of at most ``max_hops`` between pairs of key entities;
5. ``rank``: PageRank over those paths' triples; the top-k paths by mean PageRank,
   fullest bucket of key entities first;
6. ``neighbours``: 1-hop triples around main-path entities, minus relations the main
   path already uses there, spread over relations up to ``neighbor_limit``;
7. ``filter``: one LLM call keeps the neighbour triples that help (call 3);
8. ``answer``: the answer from paths and kept triples (call 4), then ``ground``:
   the graph entities the answer names, with their IRIs.

With no linked key entity, or no path between them, it says so in ``warnings`` and
falls back to the neighbourhoods of the linked entities, else to an ungrounded answer.
"""

from __future__ import annotations

from typing import Any

from pyoxigraph import NamedNode

from middleware.config.methods import RoKSettings
from middleware.kg.base import KnowledgeGraph, Path
from middleware.kg.capped import cut_note
from middleware.kg.terms import Term
from middleware.llm.base import LLM
from middleware.llm.prompt_templates import render
from middleware.methods.answer import Answer, Evidence, EvidencePath, EvidenceTriple, Grounding
from middleware.methods.method import MethodBase
from middleware.methods.rok.entities import (
    KeyEntity,
    order_key_entities,
    parse_entity_list,
    parse_numbers,
)
from middleware.methods.rok.pagerank import pagerank
from middleware.methods.rok.path_search import (
    DEFAULT_NEIGHBORS,
    DEFAULT_PATHS,
    Neighbour,
    neighbour_candidates,
    rank_paths,
    search_pairs,
    select_paths,
    spread,
    subgraph,
)
from middleware.methods.run import PriorEvidence, Run
from middleware.methods.steps import Candidates, final_answer, finish, ground
from middleware.methods.with_plan import PlanningStage
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer


class RoK(MethodBase):
    """Reasoning on efficient knowledge paths over one graph.

    >>> from middleware.kg.backends.local import LocalStore
    >>> from middleware.llm.scripted import ScriptedLLM
    >>> kg = LocalStore(profile="metaqa")
    >>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|starred_actors|Al Pacino\\n", name="kb.txt")
    >>> llm = ScriptedLLM([("Key entities:$", "Heat; Al Pacino"), ("Useful facts:$", "1"),
    ...                    ("Answer:$", "Michael Mann")], default="Heat starred Al Pacino.")
    >>> answer = RoK(llm, kg).run("Who directed the Al Pacino film Heat?")
    >>> answer.answer, answer.usage["llm_calls"], [e.label for e in answer.entities]
    ('Michael Mann', 4, ['Michael Mann'])
    >>> answer.support[0].text  # the shortest chain from a question entity
    'Heat | directed by | Michael Mann'

    Kept facts that do not join Heat to the answer would leave it "not in the graph".
    """

    name = "rok"
    multi_source = False

    def __init__(
        self,
        llm: LLM,
        graph: KnowledgeGraph | None = None,
        *,
        config: RoKSettings | None = None,
        **shared: Any,
    ) -> None:
        super().__init__(llm, graph, **shared)
        self.config = config or RoKSettings()

    def answer(self, run: Run, planning: PlanningStage | None = None) -> Answer:
        prior = planning.prior() if planning is not None else None  # rok+plan: walks first
        (graph,) = run.graphs
        stages = _RoKRun(self.config, graph, self.linker(graph), self.verbalizer(graph), run)
        return stages.answer(prior)


class _RoKRun:
    """One question through RoK's stages; each stage is a method recorded as a step."""

    def __init__(
        self,
        config: RoKSettings,
        graph: KnowledgeGraph,
        linker: EntityLinker,
        verbalizer: Verbalizer,
        run: Run,
    ) -> None:
        self.config = config
        self.graph = graph
        self.linker = linker
        self.verbalizer = verbalizer
        self.run = run
        self.question = run.question

    def answer(self, prior: PriorEvidence | None) -> Answer:
        reasoning = self.expand()
        keys = self.link(self.extract(reasoning))
        main: list[EvidencePath] = []
        if len(keys) >= 2:
            main = self.rank(keys, self.main_paths(keys))
        grounding: Grounding = "paths" if main else "neighbourhood"
        if not main and keys:
            why = (
                "only one key entity linked"
                if len(keys) == 1
                else f"no path of at most {self.config.max_hops} hops joins the key entities"
            )
            self.run.warn(f"{why}; answering from the key entities' neighbourhoods")
        centre = self._path_entities(main) if main else [k.entity.iri for k in keys]
        kept = self.filter(self.neighbours(centre, [p.path for p in main]))
        if not main and not kept:
            grounding = "none"
            if keys:
                self.run.warn("no neighbour fact was kept; the answer is not grounded")
        if not keys:
            self.run.warn(
                f"no key entity linked to graph {self.graph.name!r}; the answer is not grounded"
            )
        facts = [self.verbalizer.path(p.path) for p in main]
        facts += self.verbalizer.triples([n.triple for n in kept])
        evidence = Evidence(
            paths=main,
            triples=[
                EvidenceTriple(n.triple, self.verbalizer.triple(n.triple), "neighbour")
                for n in kept
            ],
        )
        text = final_answer(self.run, facts, evidence, prior=prior)
        nodes: list[Term] = [k.entity.iri for k in keys]
        nodes += [n for p in main for n in p.path.nodes]
        nodes += [t for n in kept for t in (n.triple.subject, n.triple.object)]
        entities = ground(
            self.run,
            text,
            [Candidates(self.graph, self.linker, nodes, self.verbalizer)],
            prior=prior,
        )
        return finish(
            self.run, text, entities=entities, evidence=evidence, grounding=grounding, prior=prior
        )

    # -- LLM calls 1 and 2 ---------------------------------------------------------------
    def expand(self) -> str:
        with self.run.step("expand") as step:
            prompt = render("rok_expand", question=self.question)
            reasoning = " ".join(self.run.complete(step, prompt).text.split())
            step.parsed = reasoning
        return reasoning

    def extract(self, reasoning: str) -> list[str]:
        with self.run.step("extract") as step:
            prompt = render("rok_entities", question=self.question, reasoning=reasoning or "-")
            mentions = parse_entity_list(self.run.complete(step, prompt).text)
            step.parsed = mentions
            if not mentions:
                step.notes.append("the model listed no entity; only question spans are linked")
        return mentions

    # -- linking and paths -----------------------------------------------------------------
    def link(self, mentions: list[str]) -> list[KeyEntity]:
        with self.run.step("link") as step:
            keys, unlinked = order_key_entities(
                self.question, mentions, self.linker, limit=self.config.max_entities
            )
            step.parsed = {"linked": [k.to_dict() for k in keys], "unlinked": unlinked}
            for key in keys:
                if key.origin.startswith("question"):
                    self.run.ask(
                        key.entity.iri.value,
                        span=key.mention,
                        match=key.entity.match or "",
                        label=key.entity.label,
                        source=self.graph.name,
                        step=step,
                    )
        return keys

    def main_paths(self, keys: list[KeyEntity]) -> list[Path]:
        with self.run.step("main_paths") as step:
            search = search_pairs(
                self.graph,
                [k.entity.iri for k in keys],
                max_hops=self.config.max_hops,
                limit=self.config.paths_per_pair or DEFAULT_PATHS,
            )
            step.notes += [
                cut_note(
                    "paths",
                    f"{self.verbalizer.name(a)} – {self.verbalizer.name(b)}",
                    self.config.paths_per_pair or DEFAULT_PATHS,
                    "paths_limit",
                )
                for a, b in search.cut
            ]
            step.parsed = {
                "pairs": [
                    {"a": a.value, "b": b.value, "paths": search.found[(a, b)]}
                    for a, b in search.pairs
                ],
                "paths": len(search.paths),
                "subgraph_triples": len(subgraph(search.paths)),
            }
        return search.paths

    def rank(self, keys: list[KeyEntity], paths: list[Path]) -> list[EvidencePath]:
        with self.run.step("rank") as step:
            edges = [(t.subject, t.object) for t in subgraph(paths)]
            ranks: dict[Term, float] = pagerank(edges, damping=self.config.damping)
            anchors = [k.entity.iri for k in keys if k.origin.startswith("question")]
            ranked = rank_paths(paths, [k.entity.iri for k in keys], ranks, anchors=anchors)
            chosen = select_paths(ranked, self.config.top_k)
            self.verbalizer.prepare(n for s in chosen for n in s.path.nodes)
            main = [
                EvidencePath(s.path, self.verbalizer.path(s.path), s.score, s.key_entities)
                for s in chosen
            ]
            buckets: dict[int, int] = {}
            for s in ranked:
                buckets[s.key_entities] = buckets.get(s.key_entities, 0) + 1
            step.parsed = {
                "nodes": len(ranks),
                "buckets": {str(k): v for k, v in sorted(buckets.items(), reverse=True)},
                "selected": [
                    {
                        "text": p.text,
                        "key_entities": p.key_entities,
                        "score": round(p.score or 0, 6),
                    }
                    for p in main
                ],
            }
        return main

    @staticmethod
    def _path_entities(main: list[EvidencePath]) -> list[NamedNode]:
        nodes = (n for p in main for n in p.path.nodes)
        return list(dict.fromkeys(n for n in nodes if isinstance(n, NamedNode)))

    def neighbours(self, entities: list[NamedNode], main: list[Path]) -> list[Neighbour]:
        if not entities:
            return []
        with self.run.step("neighbours") as step:
            per_entity = self.config.neighbors_per_entity or DEFAULT_NEIGHBORS
            report = neighbour_candidates(self.graph, entities, main, per_entity=per_entity)
            step.notes += [
                cut_note("triples", self.verbalizer.name(e), per_entity, "neighbors_limit")
                for e in report.cut
            ]
            shown = spread(report.candidates, self.config.neighbor_limit)
            step.parsed = {
                "entities": len(entities),
                "fetched": report.fetched,
                "on_main_path": report.on_main_path,
                "same_relation_dropped": report.same_relation,
                "duplicates": report.duplicates,
                "candidates": len(report.candidates),
                "shown_to_filter": len(shown),
            }
        return shown

    # -- LLM call 3: one filter over whole triples -----------------------------------------
    def filter(self, candidates: list[Neighbour]) -> list[Neighbour]:
        if not candidates:
            return []
        with self.run.step("filter") as step:
            lines = self.verbalizer.triples([c.triple for c in candidates])
            prompt = render(
                "rok_filter",
                question=self.question,
                facts=[f"{i}. {line}" for i, line in enumerate(lines, 1)],
            )
            picked = parse_numbers(self.run.complete(step, prompt).text, len(candidates))
            if picked is None:
                self.run.warn(
                    "the filter reply named no fact numbers; all shown neighbour facts are kept",
                    step,
                )
                picked = list(range(len(candidates)))
            step.parsed = [lines[i] for i in picked]
        return [candidates[i] for i in picked]

"""Knowledge Solver (``ksl``, ``ksl+plan``): the LLM walks the graph, hop by hop.

1. ``link``: the question's entities in every source; with choices, each choice's
   entities too.
2. ``subgraph`` (multiple choice): the paths of at most ``ksl_max_hops`` hops between
   question and choice entities; the walk stays on them. The walk runs in one source:
   the one with the most such paths (open questions: the first whose question links).
3. ``plan`` (``ksl+plan`` only): the planner's walks guide the offer (``guide.py``).
4. ``walk``: up to ``ksl_rounds`` rounds, one constrained call each (``walk.py``), from
   the best linked entity or, under ``ksl_start = random``, a seeded random one.
5. ``answer``: a walk that ends on a choice's entity answers with that choice, with no
   call. Otherwise one call: a constrained choice among the question's choices (the
   walk and the subgraph's paths as facts), or, for open questions, among the entities
   the walk visited, the last first. A lone candidate needs no call. So a question
   costs at most ``ksl_rounds + 1`` calls.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from typing import Any

from pyoxigraph import NamedNode

from middleware.config.methods import KSLSettings
from middleware.kg.base import KnowledgeGraph
from middleware.kg.capped import Capped
from middleware.kg.terms import Term
from middleware.kg.walks import MAX_STEPS
from middleware.llm.base import LLM
from middleware.methods.answer import Answer, AnswerEntity, Evidence, EvidencePath
from middleware.methods.ksl.guide import PlanGuide
from middleware.methods.ksl.offer import Option, Scorer, hop_options, neighbour_options
from middleware.methods.ksl.reading import PathReader
from middleware.methods.ksl.walk import STOP_REASONS, Guide, Walk, Walker
from middleware.methods.method import MethodBase
from middleware.methods.question_entities import Linked, add_subgraphs, link_entities
from middleware.methods.run import Run
from middleware.methods.steps import Candidates, final_answer, finish, ground
from middleware.methods.with_plan import PlanningStage
from middleware.text.embeddings.encoders import Encoder
from middleware.text.verbalize import Verbalizer

MAX_FACTS = 30  # subgraph paths given to the fallback choice
MAX_EXPANSION = 1000  # walks read when the walk's relation path is followed again


class KnowledgeSolver(MethodBase):
    """The LLM walks the graph (``ksl``); with a planner, ``ksl+plan``."""

    name = "ksl"

    def __init__(
        self,
        llm: LLM,
        graph: KnowledgeGraph | None = None,
        *,
        encoder: Encoder,
        config: KSLSettings | None = None,
        **shared: Any,
    ) -> None:
        super().__init__(llm, graph, **shared)
        self.encoder = encoder
        self.config = config or KSLSettings()
        self.reader = PathReader(encoder)  # phrase vectors cached across questions

    # -- stages -------------------------------------------------------------------------
    def link(self, run: Run) -> list[Linked]:
        """Step ``link``: question and choice entities in every source."""
        return link_entities(run, self.linker)

    def subgraphs(self, run: Run, linked: list[Linked]) -> None:
        """Step ``subgraph``: short paths between question and choice entities."""
        add_subgraphs(
            run,
            linked,
            max_hops=self.config.max_hops,
            per_pair=self.config.paths_per_pair,
            setting="ksl_paths_per_pair",
        )

    def pick_source(self, run: Run, linked: list[Linked]) -> Linked | None:
        """The source the walk runs in (see the module docstring)."""
        if run.choices:
            walkable = [i for i in linked if i.subgraph is not None and i.subgraph.paths]
            if not walkable:
                run.warn(
                    f"no path of at most {self.config.max_hops} hops joins the question's "
                    "entities to any choice's; the answer is not grounded"
                )
                return None
            return max(walkable, key=lambda i: len(i.subgraph.paths) if i.subgraph else 0)
        found = next((i for i in linked if i.question), None)
        if found is None:
            run.warn("no entity of the question linked to a graph; the answer is not grounded")
        return found

    def start(self, run: Run, item: Linked, guide: Guide) -> NamedNode | None:
        """The best linked entity, the planned topic, or a seeded random one."""
        entities = item.question
        if item.subgraph is not None:
            entities = [e for e in entities if item.subgraph.reaches(e)]
        if not entities:
            return None
        if isinstance(guide, PlanGuide) and guide.topic in entities:
            return guide.topic
        if self.config.start == "random":
            return random.Random(f"{self.config.seed}:{run.question}").choice(entities)
        return entities[0]

    def score(self, question: str, span: str, verbalizer: Verbalizer) -> Scorer:
        """How well relation paths from the start read like the question: the zero-shot
        planner's measure (``reading.py``)."""
        return self.reader.scorer(question, span, verbalizer)

    def neighbours(self, item: Linked, verbalizer: Verbalizer) -> Any:
        def options(entity: NamedNode, visited: Collection[Term]) -> Capped[Option]:
            if item.subgraph is not None:
                hops = [h for h in item.subgraph.steps(entity) if h.end not in visited]
                return Capped(hop_options(hops, verbalizer), False, len(hops))
            return neighbour_options(
                item.graph,
                entity,
                verbalizer,
                visited=visited,
                limit=self.config.neighbor_limit,
                spread=self.config.spread_hubs,
            )

        return options

    # -- the method ---------------------------------------------------------------------
    def answer(self, run: Run, planning: PlanningStage | None = None) -> Answer:
        """Link, pick the source, walk (guided by ``planning`` under ``ksl+plan``), answer."""
        linked = self.link(run)
        if run.choices:
            self.subgraphs(run, linked)
        item = self.pick_source(run, linked)
        guide: Guide = Guide()
        if planning is not None and item is not None:
            _, planned = planning.planning()
            guide = PlanGuide(
                planned,
                min_confidence=planning.config.min_confidence,
                targets=set(item.choices),
            )
        walk: Walk | None = None
        if item is not None:
            verbalizer = self.verbalizer(item.graph)
            start = self.start(run, item, guide)
            if start is None:
                run.warn("no linked entity of the question can start a walk")
            else:
                walker = Walker(
                    run,
                    verbalizer,
                    self.neighbours(item, verbalizer),
                    self.score(run.question, item.spans.get(start, ""), verbalizer),
                    rounds=self.config.rounds,
                    max_options=self.config.max_options,
                    max_relations=self.config.max_relations,
                    targets=set(item.choices),
                    guide=guide,
                    examples=self.config.few_shot != "off",
                )
                walk = walker.walk(start)
                run.steps[-1].notes.append(f"the walk stopped: {STOP_REASONS[walk.stop]}")
        return self.conclude(run, item, walk, guide)

    def conclude(self, run: Run, item: Linked | None, walk: Walk | None, guide: Guide) -> Answer:
        """Step ``answer`` and the grounding (see the module docstring)."""
        if item is None or walk is None or not walk.hops:
            text = final_answer(run, [], Evidence())
            sources = [Candidates(i.graph, i.linker) for i in ([item] if item else [])]
            return finish(
                run,
                text,
                entities=ground(run, text, sources),
                evidence=Evidence(),
                grounding="none",
            )
        verbalizer = self.verbalizer(item.graph)
        walked = EvidencePath(walk.path, verbalizer.path(walk.path))
        evidence = Evidence(paths=[walked])
        if run.choices and walk.end in item.choices:
            with run.step("answer") as step:
                text = run.choices[item.choices[walk.end]]  # type: ignore[index]
                step.parsed = text
                step.notes.append("the walk ended on this choice's entity")
        elif run.choices:
            assert item.subgraph is not None
            facts = [walked.text] + [verbalizer.path(p) for p in item.subgraph.paths[:MAX_FACTS]]
            text = final_answer(run, list(dict.fromkeys(facts)), evidence)
        else:
            return self.open_answer(run, item, walk, walked, verbalizer, guide)
        nodes = [n for n in walk.nodes if isinstance(n, NamedNode)]
        entities = ground(run, text, [Candidates(item.graph, item.linker, nodes, verbalizer)])
        return finish(
            run, text, entities=entities, evidence=evidence, grounding="paths", rule="walks"
        )

    def open_answer(
        self,
        run: Run,
        item: Linked,
        walk: Walk,
        walked: EvidencePath,
        verbalizer: Verbalizer,
        guide: Guide,
    ) -> Answer:
        """An open question's answer: one of the walked entities (where a confident plan
        ends, else those whose relation path from the start reads most like the question
        first), then the others that relation path reaches from the start."""
        visited = walk.nodes[1:]
        verbalizer.prepare(visited)
        names = [verbalizer.name(n) for n in visited]
        prefixes = [
            tuple((h.triple.predicate, h.forward) for h in walk.hops[:depth])
            for depth in range(1, len(walk.hops) + 1)
        ]
        scores = self.score(run.question, item.spans.get(walk.start, ""), verbalizer)(prefixes)
        ends = [guide.stops(walk.nodes[: depth + 1]) for depth in range(1, len(walk.nodes))]
        if guide.confident and any(ends):  # a confident plan says where the answers are
            ranked = sorted((i for i in range(len(names)) if ends[i]), key=lambda i: -ends[i])
        else:
            ranked = sorted(range(len(names)), key=lambda i: (-scores[i], -i))
        options = list(dict.fromkeys(names[i] for i in ranked))
        if self.config.max_relations:  # as in the walk: the best relation paths only
            options = options[: self.config.max_relations]
        if len(options) == 1:
            with run.step("answer") as step:
                text = options[0]
                step.parsed = text
                step.notes.append("the walk visited one entity: it is the answer")
        else:
            text = final_answer(run, [walked.text], Evidence(paths=[walked]), answers=options)
        if text not in names:  # graph-only policy said not found
            return finish(
                run,
                text,
                entities=[],
                evidence=Evidence(paths=[walked]),
                grounding="paths",
                rule="walks",
            )
        depth = len(names) - names[::-1].index(text)  # the last visit of that name
        chosen = walk.nodes[depth]
        evidence = Evidence(paths=[walked])
        reached: list[Term] = [chosen]
        limit = self.config.answer_items
        if limit > 1 and depth <= MAX_STEPS and isinstance(walk.start, NamedNode):
            relations = tuple((h.triple.predicate, h.forward) for h in walk.hops[:depth])
            with run.step("expand") as step:
                more = item.graph.follow(walk.start, relations, limit=MAX_EXPANSION)
                for path in more:
                    end = path.nodes[-1]
                    if end in reached or end in walk.nodes[:depth] or len(reached) >= limit:
                        continue
                    reached.append(end)
                    evidence.paths.append(EvidencePath(path, verbalizer.path(path)))
                step.parsed = {
                    "relation_path": len(relations),
                    "walks": len(more),
                    "answers": len(reached),
                }
        verbalizer.prepare(reached)
        entities = [
            AnswerEntity(n.value, verbalizer.name(n), item.graph.name)
            for n in reached
            if isinstance(n, NamedNode)
        ]
        text = ", ".join(dict.fromkeys(verbalizer.name(n) for n in reached))
        return finish(
            run, text, entities=entities, evidence=evidence, grounding="paths", rule="walks"
        )

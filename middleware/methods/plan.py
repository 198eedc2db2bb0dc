"""The ``plan`` method: relation paths planned from the graph, the answer from their walks.

1. ``plan``: the planner (``middleware/planning``) links the question, picks relation
   paths (voted by the nearest learned questions in the source's path memory, or
   ranked zero-shot) and walks them; the walks are the evidence.
2. ``answer``: when the best plan's support reaches ``plan_min_confidence`` (and the
   question has no choices), the answer is the names of the entities the best plan
   reaches, with no LLM call. Otherwise one LLM call answers from the walks (the
   shared final stage), and its answer is grounded as for any method.

>>> from middleware.kg.backends.local import LocalStore
>>> from middleware.llm.scripted import ScriptedLLM
>>> from middleware.text.embeddings import HashEncoder
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nCollateral|directed_by|Michael Mann\\n", name="kb.txt")
>>> method = Plan(ScriptedLLM(default="?"), kg, encoder=HashEncoder(), config=PlanSettings())
>>> answer = method.run("Which films did Michael Mann direct?")
>>> answer.answer, answer.usage["llm_calls"], answer.grounded
('Collateral, Heat', 0, True)
"""

from __future__ import annotations

from typing import Any

from pyoxigraph import NamedNode

from middleware.config.methods import PlanSettings
from middleware.errors import LLMOutputError
from middleware.kg.base import KnowledgeGraph, Path
from middleware.llm.base import LLM
from middleware.llm.prompt_templates import render
from middleware.methods.answer import Answer, Evidence, EvidencePath
from middleware.methods.method import MethodBase
from middleware.methods.plan_answers import answer_across, answer_from_plan, ask_topics
from middleware.methods.run import Run
from middleware.methods.steps import Candidates, final_answer, finish, ground
from middleware.planning.memory import memory_location, open_memory
from middleware.planning.planner import Planner
from middleware.planning.plans import Planning
from middleware.text.embeddings.encoders import Encoder
from middleware.text.verbalize import Verbalizer

MAX_EVIDENCE_TRIPLES = 100  # as results.jsonl counts evidence


class Plan(MethodBase):
    """Relation-path planning (``plan``): 0 LLM calls when a plan is confident, else 1."""

    name = "plan"

    def __init__(
        self,
        llm: LLM,
        graph: KnowledgeGraph | None = None,
        *,
        encoder: Encoder,
        config: PlanSettings | None = None,
        cache_dir: str | None = None,
        **shared: Any,
    ) -> None:
        super().__init__(llm, graph, **shared)
        self.encoder = encoder
        self.config = config or PlanSettings()
        self.cache_dir = cache_dir
        self._planners: dict[int, tuple[Planner, list[str]]] = {}

    def planner(self, graph: KnowledgeGraph) -> tuple[Planner, list[str]]:
        """The planner for ``graph`` with its memory (if any), and the memory's warnings."""
        if id(graph) not in self._planners:
            where = memory_location(graph, self.config.memory, self.cache_dir)
            memory, warnings = open_memory(graph, where)
            planner = Planner(
                graph,
                self.encoder,
                linker=self.linker(graph),
                verbalizer=self.verbalizer(graph),
                config=self.config,
                memory=memory,
            )
            self._planners[id(graph)] = (planner, warnings)
        return self._planners[id(graph)]

    def plan_step(self, run: Run) -> tuple[Planner, Planning]:
        """Step ``plan`` over the run's one graph: the memory's warnings, the planning."""
        planner, warnings = self.planner(run.graphs[0])
        for warning in warnings:
            run.warn(warning)
        with run.step("plan") as step:
            planning = planner.plan(run.question)
            step.parsed = planning.to_dict()
            ask_topics(run, planning, run.graphs[0].name, step)
            step.notes += planning.notes
            if not planning.plans:
                run.warn(f"no planner evidence: {'; '.join(planning.notes)}", step)
            elif all(p.backup for p in planning.plans):
                run.warn(
                    f"no {planning.mode} relation path reached anything "
                    f"({'; '.join(n for n in planning.notes if 'reaches nothing' in n)}); "
                    f"the best plan is a zero-shot guess: {planning.plans[0].description}",
                    step,
                )
        if planning.mode in ("zero-shot", "generated") and self.config.zero_shot_choose:
            self.choose_plan(run, planning)
        return planner, planning

    def choose_plan(self, run: Run, planning: Planning) -> None:
        """Step ``choose_plan``: one constrained LLM call puts its pick of the zero-shot
        or generated plans first (``plan_zero_shot_choose``); a reply naming none keeps
        the order."""
        options = list(
            dict.fromkeys(f"{p.candidate.span}: {p.description}" for p in planning.plans)
        )
        if len(options) < 2:
            return
        with run.step("choose_plan") as step:
            try:
                picked = run.choose(step, render("plan_choose", question=run.question), options)
            except LLMOutputError as err:
                run.warn(f"the model picked no plan ({err.message}); kept the ranking", step)
                return
            first = [
                p for p in planning.plans if f"{p.candidate.span}: {p.description}" == picked.option
            ]
            planning.plans = first + [p for p in planning.plans if p not in first]
            step.parsed = picked.option

    def answer(self, run: Run) -> Answer:
        if len(run.graphs) > 1:
            return answer_across(self, run, plan_evidence)
        graph = run.graphs[0]
        planner, planning = self.plan_step(run)
        verbalizer = planner.verbalizer
        evidence = plan_evidence(planning, verbalizer)
        confident = planning.plans and planning.confidence >= self.config.min_confidence
        if confident and not run.choices:
            return answer_from_plan(
                run, planning, graph, verbalizer, evidence, self.config.answer_items
            )
        text = final_answer(run, [p.text for p in evidence.paths], evidence)
        nodes = [n for p in evidence.paths for n in p.path.nodes if isinstance(n, NamedNode)]
        entities = ground(run, text, [Candidates(graph, self.linker(graph), nodes, verbalizer)])
        return finish(
            run,
            text,
            entities=entities,
            evidence=evidence,
            grounding="paths" if evidence else "none",
            rule="walks",
        )


def plan_evidence(planning: Planning, verbalizer: Verbalizer) -> Evidence:
    """The plans' walks as evidence paths, at most MAX_EVIDENCE_TRIPLES distinct triples.

    Plans take turns (best first), each giving one walk per entity it reaches before
    any second walk to the same entity, so every plan and as many entities as possible
    are represented when the walks outnumber the budget.
    """
    queues = []
    for plan in planning.plans:
        firsts: dict[object, Path] = {}
        rest: list[Path] = []
        for walk in plan.walks:
            if walk.nodes[-1] in firsts:
                rest.append(walk)
            else:
                firsts[walk.nodes[-1]] = walk
        queues.append((plan, [*firsts.values(), *rest]))
    paths: list[EvidencePath] = []
    triples: set[tuple[str, str, str]] = set()
    for turn in range(max((len(q) for _, q in queues), default=0)):
        for plan, queue in queues:
            if turn >= len(queue):
                continue
            walk = queue[turn]
            keys = {hop.triple.key() for hop in walk.hops}
            if len(triples | keys) > MAX_EVIDENCE_TRIPLES:
                continue
            triples |= keys
            paths.append(EvidencePath(walk, verbalizer.path(walk), plan.candidate.support))
    return Evidence(paths=paths)

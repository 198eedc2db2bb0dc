"""``plan`` over several sources: each source planned on its own, the plans merged.

A path memory belongs to one source, so each source is planned with its own planner
(its memory, or zero-shot) in one step ``plan`` (``parsed``: each source's planning).
The evidence is every source's walks; the most confident planning gives the answer
with no LLM call when it reaches ``plan_min_confidence``, else one LLM call answers
from all the walks and is grounded in every source. A walk stays inside its source:
a relation path whose hops lie in two sources is not walked (docs/methods.md). A
source that fails is named in the step's notes and the others answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from pyoxigraph import Literal, NamedNode

from middleware.config.methods import PlanSettings
from middleware.kg.base import KnowledgeGraph
from middleware.methods.answer import Answer, AnswerEntity, Evidence, Step
from middleware.methods.fan_out import fan_out
from middleware.methods.links import merge_entities
from middleware.methods.run import Run
from middleware.methods.steps import Candidates, final_answer, finish, ground
from middleware.planning.planner import Planner
from middleware.planning.plans import Planning
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer


class Planners(Protocol):
    """What this needs of the ``plan`` method: its settings, planners and linkers."""

    config: PlanSettings

    def planner(self, graph: KnowledgeGraph) -> tuple[Planner, list[str]]: ...

    def linker(self, graph: KnowledgeGraph) -> EntityLinker: ...


def ask_topics(run: Run, planning: Planning, source: str, step: Step | None = None) -> None:
    """The planner's topics are the entities the question names: record them on ``run``."""
    if planning.mode != "none":
        run.plan_mode = run.plan_mode or planning.mode
    if planning.plans and planning.considered:
        # the relation path ranked first reached nothing: the question may ask for a
        # relation its entity does not have, and a lesser path answered (a path put
        # first for its answer kind is not a fallback)
        run.plan_fallback = planning.considered[0] not in {p.candidate for p in planning.plans}
    run.plan_unheld_by[source] = max(run.plan_unheld_by.get(source, 0.0), planning.unheld_share)
    candidates = [*planning.considered, *(p.candidate for p in planning.plans)]
    for candidate in candidates:
        run.ask(candidate.topic.value, span=candidate.span, match="span", source=source, step=step)


def answer_across(
    method: Planners, run: Run, plan_evidence: Callable[[Planning, Verbalizer], Evidence]
) -> Answer:
    """The answer from every source's planning (see the module's docstring)."""

    def plan(graph: KnowledgeGraph) -> Planning:
        planner, warnings = method.planner(graph)
        for warning in warnings:
            run.warn(f"{graph.name}: {warning}")
        return planner.plan(run.question)

    with run.step("plan") as step:
        planned = fan_out(run.graphs, plan)
        step.parsed = {g.name: p.to_dict() for g, p in planned.results}
        for failure in planned.failures:
            run.warn(f"{failure}; planned in the other sources", step)
        for graph, planning in planned.results:
            step.notes += [f"{graph.name}: {note}" for note in planning.notes]
            ask_topics(run, planning, graph.name, step)
    paths = []
    for graph, planning in planned.results:
        paths += plan_evidence(planning, method.planner(graph)[0].verbalizer).paths
    evidence = Evidence(paths=paths)
    if not paths:
        run.warn("no planner evidence in any source")
    best_graph, best = max(planned.results, key=lambda pair: pair[1].confidence)
    if best.plans and best.confidence >= method.config.min_confidence and not run.choices:
        verbalizer = method.planner(best_graph)[0].verbalizer
        return answer_from_plan(
            run, best, best_graph, verbalizer, evidence, method.config.answer_items
        )
    text = final_answer(run, [p.text for p in evidence.paths], evidence)
    candidates = []
    for graph, _ in planned.results:
        nodes = [
            n
            for p in evidence.paths
            for n in p.path.nodes
            if isinstance(n, NamedNode) and p.path.hops[0].triple.source == graph.name
        ]
        planner = method.planner(graph)[0]
        candidates.append(Candidates(graph, method.linker(graph), nodes, planner.verbalizer))
    entities = merge_entities(run, [g for g, _ in planned.results], ground(run, text, candidates))
    return finish(
        run,
        text,
        entities=entities,
        evidence=evidence,
        grounding="paths" if evidence else "none",
        rule="walks",
    )


def answer_from_plan(
    run: Run,
    planning: Planning,
    graph: KnowledgeGraph,
    verbalizer: Verbalizer,
    evidence: Evidence,
    items: int,
) -> Answer:
    """Step ``answer`` of a confident plan: the names of the first ``items`` entities its
    best plan reaches, with no LLM call. A plan that reaches only literals ("1997")
    answers with their values, which no walk supports (answers are entities), so they
    are withheld as the guess under ``answer_graph_only``, with a warning that says so."""
    with run.step("answer") as step:
        chosen = planning.answers()[:items]
        verbalizer.prepare(chosen)
        names = [verbalizer.name(n) for n in chosen]
        entities = [
            AnswerEntity(n.value, name, graph.name) for n, name in zip(chosen, names, strict=True)
        ]
        if not chosen:
            ends = (w.nodes[-1] for w in planning.plans[0].walks if w.hops)
            names = list(dict.fromkeys(e.value for e in ends if isinstance(e, Literal)))[:items]
            run.warn(
                f"the best plan reaches only literal values ({', '.join(names[:3])}); an "
                "answer must be a graph entity the walks reach, so they are not supported",
                step,
            )
        step.parsed = text = ", ".join(names)
    return finish(
        run,
        text,
        entities=entities,
        evidence=evidence,
        grounding="paths",
        support=planning.confidence,
        rule="walks",
    )

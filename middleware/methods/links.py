"""Several sources joined at the entities they share (step ``same_as``).

A source whose profile has ``same_as`` (``kg/sameas.py``) says which of its entities are
another source's: the entities linked in one source bring their counterparts in the
others into those sources' neighbourhoods, so facts from both meet at the shared
entity, and an answer names each such entity once. A source whose link queries fail is
reported in the step and left out of the join.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyoxigraph import NamedNode

from middleware.kg.base import KnowledgeGraph, template_graph
from middleware.kg.sameas import inward, outward
from middleware.methods.answer import AnswerEntity
from middleware.methods.fan_out import fan_out
from middleware.methods.run import Run


def _linking(graphs: Sequence[KnowledgeGraph]) -> list[KnowledgeGraph]:
    if len(graphs) < 2:
        return []
    return [g for g in graphs if g.profile.same_as is not None and g.capabilities.templates]


def _same_question_entity(run: Run, a: NamedNode, b: NamedNode) -> None:
    """Whichever of ``a`` and ``b`` the question names, the other is the same entity:
    a question entity too, linked as strongly (or weakly) as it."""
    for known, other in ((a, b), (b, a)):
        asked = run.asked.get(known.value)
        if asked is not None and asked.span:
            run.ask(other.value, span=asked.span, match=asked.match, label=asked.label)


def cross_link(
    run: Run, graphs: Sequence[KnowledgeGraph], entities: dict[str, list[NamedNode]]
) -> dict[str, list[NamedNode]]:
    """Per source, the entities that other sources' ``entities`` are the same as."""
    linking = _linking(graphs)
    extra: dict[str, list[NamedNode]] = {g.name: [] for g in graphs}
    if not linking:
        return extra

    def links(
        graph: KnowledgeGraph,
    ) -> tuple[dict[NamedNode, NamedNode], dict[NamedNode, NamedNode]]:
        rule = graph.profile.same_as
        assert rule is not None
        own = template_graph(graph)
        foreign = [e for g in graphs if g is not graph for e in entities.get(g.name, [])]
        return outward(own, rule, entities.get(graph.name, [])), inward(own, rule, foreign)

    with run.step("same_as") as step:
        found = fan_out(linking, links, raise_if_all_fail=False)
        parsed: dict[str, dict[str, str]] = {}
        for graph, (out, into) in found.results:
            for other in graphs:
                if other is not graph:
                    extra[other.name] += [
                        iri for iri in out.values() if iri not in extra[other.name]
                    ]
            extra[graph.name] += [e for e in into.values() if e not in extra[graph.name]]
            parsed[graph.name] = {
                **{a.value: b.value for a, b in out.items()},
                **{b.value: a.value for a, b in into.items()},
            }
            for a, b in [*out.items(), *((y, x) for x, y in into.items())]:
                _same_question_entity(run, a, b)
        step.parsed = parsed
        for failure in found.failures:
            run.warn(f"{failure}; its entities are not joined to the other sources", step)
    for graph in graphs:
        seen = set(entities.get(graph.name, []))
        extra[graph.name] = [e for e in extra[graph.name] if e not in seen]
    return extra


def merge_entities(
    run: Run, graphs: Sequence[KnowledgeGraph], entities: list[AnswerEntity]
) -> list[AnswerEntity]:
    """``entities`` with each one that another source's entity is the same as named once."""
    linking = _linking(graphs)
    if not linking or len(entities) < 2:
        return entities
    present = {e.iri for e in entities}
    drop: set[tuple[str, str | None]] = set()

    def same(graph: KnowledgeGraph) -> dict[NamedNode, NamedNode]:
        rule = graph.profile.same_as
        assert rule is not None
        own = [NamedNode(e.iri) for e in entities if e.source == graph.name]
        return outward(template_graph(graph), rule, own)

    found = fan_out(linking, same, raise_if_all_fail=False)
    for graph, pairs in found.results:
        drop |= {(a.value, graph.name) for a, b in pairs.items() if b.value in present}
    for failure in found.failures:
        run.warn(f"{failure}; the answer's entities from it are not merged")
    return [e for e in entities if (e.iri, e.source) not in drop]

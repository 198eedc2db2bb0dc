"""Question and choice entities per source, and the multiple-choice subgraph between them
(steps ``link`` and ``subgraph``, shared by ``ksl`` and the ``reach`` baseline)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyoxigraph import NamedNode

from middleware.kg.base import KnowledgeGraph
from middleware.kg.capped import cut_note
from middleware.methods.choice_subgraph import Subgraph
from middleware.methods.collect import LINK_MATCHES, link_question
from middleware.methods.fan_out import fan_out
from middleware.methods.run import Run
from middleware.text.linking import EntityLinker

CHOICE_ENTITIES = 3  # entities one choice's text may link to (labels are shared)


@dataclass
class Linked:
    """One source's entities for the question and for each choice."""

    graph: KnowledgeGraph
    linker: EntityLinker
    question: list[NamedNode]
    choices: dict[NamedNode, int]  # a choice's entity → the choice's index
    spans: dict[NamedNode, str]  # a question entity → the words of the question naming it
    subgraph: Subgraph | None = None


def link_entities(run: Run, linker_for: Callable[[KnowledgeGraph], EntityLinker]) -> list[Linked]:
    """Step ``link``: question and choice entities in every source; a failing source
    is a warning while another answers."""

    def one(graph: KnowledgeGraph) -> Linked:
        linker = linker_for(graph)
        names = link_question(linker, run.question)
        entities = [n.entity.iri for n in names]
        choices: dict[NamedNode, int] = {}
        for index, choice in enumerate(run.choices or ()):
            for entity in linker.link(choice, limit=CHOICE_ENTITIES):
                if entity.match in LINK_MATCHES and entity.iri not in entities:
                    choices.setdefault(entity.iri, index)
        return Linked(graph, linker, entities, choices, {n.entity.iri: n.name for n in names})

    with run.step("link") as step:
        done = fan_out(run.graphs, one)
        linked = [found for _, found in done.results]
        for item in linked:
            for iri, span in item.spans.items():
                run.ask(iri.value, span=span, match="span", source=item.graph.name, step=step)
        for failure in done.failures:
            run.warn(f"{failure}; answered from the other sources", step)
        step.parsed = {
            item.graph.name: {
                "question": [e.value for e in item.question],
                "choices": {e.value: i for e, i in item.choices.items()},
            }
            for item in linked
        }
    return linked


def add_subgraphs(
    run: Run, linked: list[Linked], *, max_hops: int, per_pair: int, setting: str
) -> None:
    """Step ``subgraph``: the paths of at most ``max_hops`` hops between each source's
    question and choice entities; a note names each pair cut at ``per_pair`` (the
    ``setting`` named)."""
    with run.step("subgraph") as step:
        for item in linked:
            item.subgraph = Subgraph.between(
                item.graph, item.question, list(item.choices), max_hops=max_hops, per_pair=per_pair
            )
            step.notes += [
                cut_note("paths", f"{a.value} – {b.value}", per_pair, setting)
                for a, b in item.subgraph.cut
            ]
        step.parsed = {
            i.graph.name: {"paths": len(i.subgraph.paths), "triples": i.subgraph.size}
            for i in linked
            if i.subgraph is not None
        }

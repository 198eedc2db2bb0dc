"""QSM baseline: the question itself matched against its entities' neighbourhoods.

The question's spans are linked in every source (step ``link``); the linked entities' 1-hop
neighbourhoods are verbalized and embedded with the question; the ``top_k`` most
similar triples go to the LLM with the question, in one call. It is the pseudo-graph
method without the draft and the verification, so comparing the two shows what they add.

>>> from middleware.text.embeddings import HashEncoder
>>> from middleware.kg.backends.local import LocalStore
>>> from middleware.llm.scripted import ScriptedLLM
>>> kg = LocalStore(profile="metaqa", name="films")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|release_year|1995\\n", name="kb.txt")
>>> answer = QSM(ScriptedLLM([("Answer:$", "Michael Mann")]), kg, encoder=HashEncoder()).run("Who directed Heat?")
>>> answer.answer, answer.usage["llm_calls"], len(answer.evidence.triples)
('Michael Mann', 1, 2)
"""

from __future__ import annotations

from typing import Any

from middleware.config.methods import QSMSettings
from middleware.kg.base import KnowledgeGraph
from middleware.llm.base import LLM
from middleware.methods.answer import Answer, Evidence, EvidenceTriple
from middleware.methods.collect import (
    BaseTriple,
    LinkedName,
    ask_names,
    link_question,
    neighbourhood,
    top_matches,
)
from middleware.methods.fan_out import fan_out
from middleware.methods.links import cross_link, merge_entities
from middleware.methods.method import MethodBase
from middleware.methods.run import Run
from middleware.methods.steps import Candidates, final_answer, finish, ground
from middleware.methods.with_plan import PlanningStage
from middleware.text.embeddings.encoders import Encoder
from middleware.text.linking import EntityLinker


class QSM(MethodBase):
    """Question-to-triple semantic matching (``qsm``), one LLM call; any number of sources."""

    name = "qsm"

    def __init__(
        self,
        llm: LLM,
        graph: KnowledgeGraph | None = None,
        *,
        encoder: Encoder,
        config: QSMSettings | None = None,
        **shared: Any,
    ) -> None:
        super().__init__(llm, graph, **shared)
        self.encoder = encoder
        self.config = config or QSMSettings()

    def answer(self, run: Run, planning: PlanningStage | None = None) -> Answer:
        prior = planning.prior() if planning is not None else None  # qsm+plan: walks first
        config = self.config
        linkers: dict[str, EntityLinker] = {}

        def link(graph: KnowledgeGraph) -> list[LinkedName]:
            linker = linkers.setdefault(graph.name, self.linker(graph))
            return link_question(linker, run.question)[: config.max_entities]

        with run.step("link") as step:
            linked = fan_out(run.graphs, link)
            step.parsed = {
                g.name: {"linked": [n.to_dict() for n in names]} for g, names in linked.results
            }
            for graph, names in linked.results:
                ask_names(run, names, graph.name, step)
            for failure in linked.failures:
                run.warn(f"{failure}; answered from the other sources", step)

        extra = cross_link(
            run,
            [g for g, _ in linked.results],
            {g.name: [n.entity.iri for n in names] for g, names in linked.results},
        )

        cuts: list[str] = []

        def gather(graph: KnowledgeGraph) -> list[BaseTriple]:
            names = next(n for g, n in linked.results if g is graph)
            return neighbourhood(
                graph,
                [n.entity.iri for n in names] + extra[graph.name],
                per_entity=config.neighbors_per_entity,
                verbalizer=self.verbalizer(graph),
                cuts=cuts,
                setting="qsm_neighbors_per_entity",
                spread=config.spread_hubs,
            )

        with run.step("base_graph") as step:
            gathered = fan_out([g for g, _ in linked.results], gather)
            step.notes += cuts
            base = [b for _, triples in gathered.results for b in triples]
            step.parsed = {g.name: len(t) for g, t in gathered.results}
            for failure in gathered.failures:
                run.warn(f"{failure}; answered from the other sources", step)
        with run.step("match") as step:
            vectors = self.encoder.encode([run.question, *(b.text for b in base)])
            hits = top_matches(
                vectors[:1], vectors[1:], k=config.top_k, faiss_threshold=self.text.faiss_threshold
            )[0]
            chosen = [base[i] for i, _ in hits]
            step.parsed = [{"text": base[i].text, "score": round(s, 4)} for i, s in hits]
        if not chosen:
            run.warn("no entity of the question linked to a graph; the answer is not grounded")
        evidence = Evidence(triples=[EvidenceTriple(b.triple, b.text, "matched") for b in chosen])
        text = final_answer(run, [b.text for b in chosen], evidence, prior=prior)
        entities = ground(
            run,
            text,
            [
                Candidates(
                    graph,
                    linkers[graph.name],
                    [
                        t
                        for b in chosen
                        if b.triple.source == graph.name
                        for t in (b.triple.subject, b.triple.object)
                    ],
                    self.verbalizer(graph),
                )
                for graph, _ in gathered.results
            ],
            prior=prior,
        )
        entities = merge_entities(run, [g for g, _ in gathered.results], entities)
        return finish(
            run,
            text,
            entities=entities,
            evidence=evidence,
            grounding="neighbourhood" if chosen else "none",
            prior=prior,
        )

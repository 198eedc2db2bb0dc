"""QSM baseline: the question itself matched against its entities' neighbourhoods.

The question's spans are linked in every source; the linked entities' 1-hop
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

from pyoxigraph import NamedNode

from middleware.kg.base import KnowledgeGraph
from middleware.llm.base import LLM
from middleware.llm.templates import render
from middleware.methods.base import Answer, Evidence, EvidenceTriple, MethodBase, Run, clean_answer
from middleware.methods.grounding import ground_answer
from middleware.methods.semantic import BaseTriple, link_question, neighbourhood, top_matches
from middleware.methods.sources import fan_out
from middleware.text.embeddings.encoders import Encoder
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer


class QSM(MethodBase):
    """Question-to-triple semantic matching (``qsm``), one LLM call; any number of sources."""

    name = "qsm"

    def __init__(
        self,
        llm: LLM,
        graph: KnowledgeGraph | None = None,
        *,
        encoder: Encoder,
        top_k: int = 10,
        neighbors_per_entity: int = 100,
        max_entities: int = 12,
        fuzzy_cutoff: float = 85.0,
    ) -> None:
        super().__init__(llm, graph)
        self.encoder = encoder
        self.top_k = top_k
        self.neighbors_per_entity = neighbors_per_entity
        self.max_entities = max_entities
        self.fuzzy_cutoff = fuzzy_cutoff

    def answer(self, run: Run) -> Answer:
        linkers: dict[str, EntityLinker] = {}

        def gather(graph: KnowledgeGraph) -> list[BaseTriple]:
            linker = linkers.setdefault(
                graph.name, EntityLinker(graph, fuzzy_cutoff=self.fuzzy_cutoff)
            )
            iris = [n.entity.iri for n in link_question(linker, run.question)][: self.max_entities]
            return neighbourhood(graph, iris, per_entity=self.neighbors_per_entity)

        with run.step("base_graph") as step:
            gathered = fan_out(run.graphs, gather)
            base = [b for _, triples in gathered.results for b in triples]
            step.parsed = {g.name: len(t) for g, t in gathered.results}
            for failure in gathered.failures:
                run.warn(f"{failure}; answered from the other sources", step)
        with run.step("match") as step:
            vectors = self.encoder.encode([run.question, *(b.text for b in base)])
            hits = top_matches(vectors[:1], vectors[1:], k=self.top_k)[0]
            chosen = [base[i] for i, _ in hits]
            step.parsed = [{"text": base[i].text, "score": round(s, 4)} for i, s in hits]
        with run.step("answer") as step:
            facts = [b.text for b in chosen]
            if run.choices:
                prompt = render("choice_answer", question=run.question, facts=facts)
                text = run.choose(step, prompt, run.choices).option
            else:
                prompt = render("facts_answer", question=run.question, facts=facts)
                text = clean_answer(run.complete(step, prompt).text)
            step.parsed = text
        entities = []
        with run.step("ground") as step:
            for graph, _ in gathered.results:
                verbalizer = Verbalizer(graph)
                nodes = [
                    t
                    for b in chosen
                    if b.triple.source == graph.name
                    for t in (b.triple.subject, b.triple.object)
                ]
                iris = [n for n in dict.fromkeys(nodes) if isinstance(n, NamedNode)]
                verbalizer.prepare(iris)
                candidates = {iri: (verbalizer.name(iri), graph.name) for iri in iris}
                entities += ground_answer(
                    text, run.question, candidates, linker=linkers[graph.name]
                )
            step.parsed = [e.to_dict() for e in entities]
        if not chosen:
            run.warn("no entity of the question linked to a graph; the answer is not grounded")
        evidence = Evidence(triples=[EvidenceTriple(b.triple, b.text, "matched") for b in chosen])
        return run.finish(
            text,
            grounding="neighbourhood" if chosen else "none",
            entities=entities,
            evidence=evidence,
        )

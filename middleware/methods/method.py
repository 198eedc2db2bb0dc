"""The ``Method`` protocol and ``MethodBase``, which every built-in method extends.

``MethodBase.run`` checks the input, picks the graphs, opens the ``Run`` and calls the
method's own ``answer``. When the graphs themselves fail (an endpoint down or timing
out) it either raises that error (HTTP 502/504) or, under ``allow_ungrounded``, answers
without evidence through the shared final stage, naming the failed sources.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

from middleware.config.areas import TextSettings
from middleware.errors import BadRequest, EndpointError
from middleware.kg.base import KnowledgeGraph
from middleware.llm.base import LLM
from middleware.llm.ledger import Budget
from middleware.methods.answer import Answer, Evidence
from middleware.methods.progress import StepListener
from middleware.methods.run import AnswerPolicy, Run, check_question
from middleware.methods.steps import final_answer, finish
from middleware.planning.relation_fit import RelationFit
from middleware.support.tracing import span
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer


class Method(Protocol):
    """A question-answering method over zero or more graphs."""

    name: str
    graph_method: bool  # False: a baseline, whose answers never come from evidence

    def run(
        self,
        question: str,
        *,
        choices: Sequence[str] | None = None,
        sources: Sequence[KnowledgeGraph] | None = None,
        budget: Budget | None = None,
        listener: StepListener | None = None,
    ) -> Answer: ...


class MethodBase(ABC):
    """What every built-in method shares: input checks, its graphs, the ``Run``, the
    linking and verbalizing options, and the answer policy.

    A subclass names itself and answers inside a prepared ``Run``; ``graphs_for``
    decides which graphs a call uses (by default the ``sources`` given, else its own).
    """

    name = "method"
    multi_source = True  # False: the method works inside one graph only
    # False (baselines): answers never come from evidence, so ``answer_graph_only``
    # does not apply to them
    graph_method = True

    def __init__(
        self,
        llm: LLM,
        graph: KnowledgeGraph | None = None,
        *,
        text: TextSettings | None = None,
        policy: AnswerPolicy | None = None,
    ) -> None:
        self.llm = llm
        self.graph = graph
        self.text = text or TextSettings()
        self.policy = policy or AnswerPolicy()
        # each source's own linking and verbalizing settings, where a workspace knows them
        self.text_of: Callable[[KnowledgeGraph], TextSettings] | None = None
        # per source, which relation a question asks about (part of an answer's confidence)
        self.relation_fit: Callable[[KnowledgeGraph], RelationFit] | None = None

    def use_relation_fit(self, fit_for: Callable[[KnowledgeGraph], RelationFit]) -> None:
        """Weigh each supported answer by whether its support holds the relation the
        question asks about, as ``fit_for`` reads it per source."""
        self.relation_fit = fit_for

    def use_source_settings(self, text_of: Callable[[KnowledgeGraph], TextSettings]) -> None:
        """Link and verbalize each graph with the settings of its own source (a question
        may use several), as ``text_of`` gives them."""
        self.text_of = text_of

    def text_for(self, graph: KnowledgeGraph) -> TextSettings:
        """The linking and verbalizing settings for ``graph``."""
        return self.text_of(graph) if self.text_of is not None else self.text

    def linker(self, graph: KnowledgeGraph) -> EntityLinker:
        return EntityLinker.from_settings(graph, self.text_for(graph))

    def verbalizer(self, graph: KnowledgeGraph) -> Verbalizer:
        return Verbalizer(graph, literal_max_chars=self.text_for(graph).literal_max_chars)

    def run(
        self,
        question: str,
        *,
        choices: Sequence[str] | None = None,
        sources: Sequence[KnowledgeGraph] | None = None,
        budget: Budget | None = None,
        listener: StepListener | None = None,
    ) -> Answer:
        """Answer ``question``; ``listener`` hears each step and LLM call as it happens."""
        text, options = check_question(question, choices)
        graphs = self.graphs_for(sources)
        run = Run(
            text,
            self.name,
            self.llm,
            graphs=graphs,
            budget=budget,
            choices=options,
            policy=self.policy if self.graph_method else replace(self.policy, graph_only=False),
            listener=listener,
        )
        if self.relation_fit is not None and self.graph_method:
            run.relation_fits = {g.name: self.relation_fit(g) for g in graphs}
        names = ",".join(g.name for g in graphs)
        with span("kgmw.answer", method=self.name, sources=names) as root:
            answer = self._answer(run, graphs)
            usage = answer.usage
            root.set(
                llm_calls=usage.llm_calls,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                sparql_queries=usage.sparql_queries,
            )
        return answer

    def _answer(self, run: Run, graphs: list[KnowledgeGraph]) -> Answer:
        try:
            return self.answer(run)
        except EndpointError as err:
            if not self.policy.allow_ungrounded or not graphs:
                raise
            names = ", ".join(repr(g.name) for g in graphs)
            run.warn(
                f"every source failed ({names}; {type(err).__name__}: {err}); "
                "answered without evidence because allow_ungrounded is on"
            )
            run.policy = replace(run.policy, graph_only=False)  # the caller asked for this
            answer = final_answer(run, [], Evidence())
            return finish(run, answer, entities=[], evidence=Evidence(), grounding="none")

    def graphs_for(self, sources: Sequence[KnowledgeGraph] | None) -> list[KnowledgeGraph]:
        if sources is not None:
            graphs = list(sources)
        else:
            graphs = [self.graph] if self.graph is not None else []
        if not self.multi_source and len(graphs) != 1:
            raise BadRequest(
                f"{self.name} works inside one graph; {len(graphs)} sources were given",
                hint="pick one source, or use a multi-source method",
            )
        return graphs

    @abstractmethod
    def answer(self, run: Run) -> Answer:
        """Answer ``run.question`` with the run's graphs, recording each step."""

"""One behaviour suite for every registered method, over one backend, with scripted LLMs.

A backend's test class inherits ``MethodConformance`` and provides a ``graph`` fixture
holding the films graph (``films_path()``, generic profile); each test then runs once
per method in ``methods.registry.SPECS``, so a method is covered by being registered::

    class TestMethodsOverMyBackend(MethodConformance):
        @pytest.fixture(scope="class")
        @classmethod
        def graph(cls) -> MyBackend:
            return MyBackend.from_file(films_path())

The scripted models know nothing: one picks the first option and otherwise names
James Cameron, the other replies with text nothing can parse. A source that fails is
a SPARQL endpoint on a closed local port.
"""

from __future__ import annotations

import contextlib
import socket
from typing import Any

import pytest
from pyoxigraph import NamedNode

from middleware.config import Settings
from middleware.errors import BadRequest, BudgetExceeded, EndpointError
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.base import KnowledgeGraph
from middleware.llm.ledger import Budget
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import NOT_FOUND, Answer
from middleware.methods.method import Method
from middleware.methods.registry import SPECS, MethodSpec, build_method, method_spec
from middleware.testing.llms import first_option_or, garbled

QUESTION = "Who directed Titanic?"
UNKNOWN = "Who directed Zqxjv Blorptwang?"
CHOICES = ["James Cameron", "Christopher Nolan"]


def quick_settings(**values: Any) -> Settings:
    """Defaults, with the hash encoder and no caches or progress bars (fast, offline)."""
    base = {"encoder": "hash", "encoder_cache": False, "llm_cache": False, "progress": False}
    return Settings.build(base | values)


def down_endpoint(name: str = "down") -> SparqlEndpoint:
    """An endpoint on a local port nothing listens on: every query fails at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    return SparqlEndpoint(
        f"http://127.0.0.1:{port}/query", profile="generic", name=name, timeout=2, retries=0
    )


def evidence_iris(answer: Answer) -> set[str]:
    return {n.value for item in answer.evidence.items() for n in item if isinstance(n, NamedNode)}


class MethodConformance:
    """Subclasses provide a ``graph`` fixture: a KnowledgeGraph holding the films graph."""

    @pytest.fixture(params=[spec.name for spec in SPECS])
    def spec(self, request: pytest.FixtureRequest) -> MethodSpec:
        return method_spec(str(request.param))

    def build(
        self, spec: MethodSpec, llm: ScriptedLLM, graph: KnowledgeGraph | None, **values: Any
    ) -> Method:
        return build_method(spec.name, quick_settings(**values), llm, graph)

    def check_evidence_exists(self, answer: Answer, graph: KnowledgeGraph) -> None:
        for triple in answer.evidence.all_triples():
            assert triple.source == graph.name, triple
            assert graph.has_triple(triple), f"{answer.method}: evidence not in the graph: {triple}"

    # -- the answer and its record -----------------------------------------------------
    def test_returns_an_answer_with_steps_and_usage(
        self, spec: MethodSpec, graph: KnowledgeGraph
    ) -> None:
        llm = first_option_or("James Cameron")
        answer = self.build(spec, llm, graph).run(QUESTION)
        assert isinstance(answer, Answer)
        assert (answer.method, answer.question, answer.sources) == (
            spec.name,
            QUESTION,
            [graph.name],
        )
        assert answer.answer and answer.steps and all(step.name for step in answer.steps)
        # a method may answer from the graph alone (plan: 0 calls when a plan is sure)
        assert answer.usage["llm_calls"] == answer.usage.llm_calls == len(llm.calls)
        assert sum(step.llm_calls for step in answer.steps) == len(llm.calls)
        assert answer.usage.prompt_tokens == sum(step.prompt_tokens for step in answer.steps)
        assert 0.0 <= answer.confidence <= 1.0

    def test_every_evidence_triple_exists_in_the_graph(
        self, spec: MethodSpec, graph: KnowledgeGraph
    ) -> None:
        answer = self.build(spec, first_option_or("James Cameron"), graph).run(QUESTION)
        self.check_evidence_exists(answer, graph)

    def test_grounded_only_when_evidence_joins_the_question_to_the_answer(
        self, spec: MethodSpec, graph: KnowledgeGraph
    ) -> None:
        for reply in ("James Cameron", "Ada Lovelace"):
            for graph_only in (True, False):
                method = self.build(
                    spec, first_option_or(reply), graph, answer_graph_only=graph_only
                )
                answer = method.run(QUESTION)
                assert answer.grounded == bool(answer.support), (reply, answer.answer)
                evidence = {t.key() for t in answer.evidence.all_triples()}
                answers = {e.iri for e in answer.entities}
                for chain in answer.support:  # each chain: evidence, question → answer
                    assert {t.key() for t in chain.triples} <= evidence, chain
                    assert chain.answer in answers and chain.start != chain.answer
                if "Ada Lovelace" in answer.answer:  # the model's guess: not in the graph at all
                    assert not answer.grounded

    def test_respects_the_call_budget(self, spec: MethodSpec, graph: KnowledgeGraph) -> None:
        for calls in (1, 2):
            llm = first_option_or("James Cameron")
            # stopping at the limit with BudgetExceeded is one way to respect it
            with contextlib.suppress(BudgetExceeded):
                self.build(spec, llm, graph).run(QUESTION, budget=Budget(max_calls=calls))
            assert len(llm.calls) <= calls

    def test_graph_only_answers_not_found_without_support(
        self, spec: MethodSpec, graph: KnowledgeGraph
    ) -> None:
        method = self.build(spec, first_option_or("Ada Lovelace"), graph, answer_graph_only=True)
        answer = method.run(QUESTION)
        if not method.graph_method:  # a baseline: exempt, it answers from the model alone
            assert answer.found and not answer.grounded and answer.guess is None
            return
        # the model's unsupported guess is withheld, kept as the guess; a supported answer stays
        assert "Ada Lovelace" not in answer.answer
        if answer.answer == NOT_FOUND:
            assert not answer.found and not answer.grounded and answer.warnings
            assert answer.guess is None or answer.guess.why
        else:
            assert answer.grounded and answer.found

    # -- what goes wrong ------------------------------------------------------------------
    def test_survives_an_empty_neighbourhood(self, spec: MethodSpec, graph: KnowledgeGraph) -> None:
        answer = self.build(spec, first_option_or("Ada Lovelace"), graph).run(UNKNOWN)
        assert isinstance(answer, Answer) and not answer.grounded
        self.check_evidence_exists(answer, graph)

    def test_survives_an_unparseable_reply(self, spec: MethodSpec, graph: KnowledgeGraph) -> None:
        answer = self.build(spec, garbled(), graph).run(QUESTION)
        assert isinstance(answer, Answer) and answer.steps
        self.check_evidence_exists(answer, graph)
        with_choices = self.build(spec, garbled(), graph).run(QUESTION, choices=CHOICES)
        assert with_choices.answer in CHOICES

    def test_a_failing_source_alone_gives_its_error(self, spec: MethodSpec) -> None:
        down = down_endpoint()
        try:
            answer = self.build(spec, first_option_or("James Cameron"), down).run(QUESTION)
        except EndpointError as err:
            assert err.status in (502, 504)
            return
        # Only a method whose answer never rests on the graph (io, cot: the graph only
        # names the answer's entities) may answer, and it must say the source failed.
        assert not answer.evidence and not answer.grounded
        if down.query_count:
            assert any("'down'" in w for w in answer.warnings), answer.warnings

    def test_allow_ungrounded_answers_when_every_source_fails(self, spec: MethodSpec) -> None:
        down = down_endpoint()
        llm = first_option_or("James Cameron")
        answer = self.build(spec, llm, down, allow_ungrounded=True).run(QUESTION)
        assert not answer.grounded and not answer.evidence
        if down.query_count:
            assert any("'down'" in w for w in answer.warnings), answer.warnings

    def test_a_failing_source_with_another_left_is_a_warning(
        self, spec: MethodSpec, graph: KnowledgeGraph
    ) -> None:
        down = down_endpoint()
        method = self.build(spec, first_option_or("James Cameron"), None)
        if not spec.multi_source:
            with pytest.raises(BadRequest):
                method.run(QUESTION, sources=[down, graph])
            return
        answer = method.run(QUESTION, sources=[down, graph])
        assert isinstance(answer, Answer)
        if down.query_count:
            assert any("'down'" in w for w in answer.warnings), answer.warnings
        self.check_evidence_exists(answer, graph)

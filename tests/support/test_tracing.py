"""OpenTelemetry spans: one answer's tree (answer, steps, LLM calls, SPARQL queries)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from middleware.config import Settings
from middleware.kg.sample import sample_store
from middleware.methods.registry import build_method
from middleware.support import tracing
from tests.cli_helpers import rok_script


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    try:
        yield exporter
    finally:
        tracing.use_provider(None)


def _children(spans: tuple[ReadableSpan, ...], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def test_an_answer_is_one_tree_of_steps_llm_calls_and_queries(
    exported: InMemorySpanExporter, tmp_path: pytest.TempPathFactory
) -> None:
    settings = Settings.load(config_path=None, env={}, overrides={"encoder": "hash"})
    graph = sample_store(cache_dir=str(tmp_path))
    answer = build_method("rok", settings, rok_script(), graph).run("Who directed Titanic?")
    spans = exported.get_finished_spans()
    roots = [s for s in spans if s.parent is None]
    assert [r.name for r in roots] == ["kgmw.answer"]
    root = roots[0]
    assert root.attributes is not None
    assert root.attributes["method"] == "rok" and root.attributes["sources"] == graph.name
    assert root.attributes["llm_calls"] == answer.usage.llm_calls == 4
    steps = _children(spans, root)
    assert steps and {s.name for s in steps} == {"kgmw.step"}
    assert [s.attributes["step"] for s in steps if s.attributes] == [s.name for s in answer.steps]
    llm = [s for s in spans if s.name == "kgmw.llm"]
    assert len(llm) == 4
    for call in llm:
        assert call.attributes is not None and call.parent is not None
        parent = next(s for s in steps if s.context and s.context.span_id == call.parent.span_id)
        assert call.attributes["step"] == parent.attributes["step"]  # type: ignore[index]
        assert call.attributes["model"] and "prompt_tokens" in call.attributes
    sparql = [s for s in spans if s.name == "kgmw.sparql"]
    assert len(sparql) == answer.usage.sparql_queries > 0
    kinds = {s.attributes["kind"] for s in sparql if s.attributes}
    assert "query" not in kinds  # every query a method runs is a named template
    assert all(s.attributes and s.attributes["source"] == graph.name for s in sparql)


def test_spans_cost_nothing_without_a_provider() -> None:
    assert not tracing.enabled()
    assert tracing.span("kgmw.answer", method="io") is tracing.span("x")  # one shared object
    with tracing.span("kgmw.answer", method="io") as first, tracing.span("x") as second:
        first.set(llm_calls=1)
    assert first is second


def test_a_proxied_query_is_a_span_of_its_source(
    exported: InMemorySpanExporter, tmp_path: pytest.TempPathFactory
) -> None:
    from middleware.server import create_app
    from middleware.server.context import STATE_KEY

    graph = sample_store(cache_dir=str(tmp_path))
    settings = Settings.load(config_path=None, env={}, overrides={"encoder": "hash"})
    app = create_app(settings, llm=None, graphs={"sample": graph})
    try:
        reply = app.test_client().get("/sparql", query_string={"query": "ASK { ?s ?p ?o }"})
    finally:
        app.config[STATE_KEY].close()
    assert reply.status_code == 200
    queries = [s for s in exported.get_finished_spans() if s.name == "kgmw.sparql"]
    assert len(queries) == 1 and queries[0].attributes is not None
    assert queries[0].attributes["source"] == "sample"
    assert queries[0].attributes["kind"] == "query"

"""The Answer's JSON and RDF forms."""

from __future__ import annotations

import json

import pytest
import rdflib
from rdflib.namespace import RDF

from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import Answer
from middleware.methods.rok import RoK
from middleware.serialize import answer_json, answer_turtle
from middleware.support.resources import resource_dir

KGMW = rdflib.Namespace("https://kgmw.dev/ns#")
PROV = rdflib.Namespace("http://www.w3.org/ns/prov#")


@pytest.fixture(scope="module")
def answer() -> Answer:
    kg = LocalStore(profile="metaqa", name="films")
    kg.load_text(
        "Titanic|directed_by|James Cameron\nTitanic|starred_actors|Kate Winslet\n"
        "Titanic|release_year|1997\n",
        name="kb.txt",
    )
    llm = ScriptedLLM(
        [
            ("Key entities:$", "Titanic; Kate Winslet"),
            ("Useful facts:$", "1"),
            ("Answer:$", "James Cameron"),
        ],
        default="Titanic is by James Cameron.",
    )
    return RoK(llm, kg).run('Who directed "Titanic" with Kate Winslet?')


def test_json_shape(answer: Answer) -> None:
    data = json.loads(answer_json(answer))
    assert set(data) == {
        "question",
        "answer",
        "found",
        "guess",
        "method",
        "grounded",
        "support",
        "grounding",
        "confidence",
        "entities",
        "evidence",
        "steps",
        "usage",
        "warnings",
        "choices",
        "sources",
    }
    assert data["method"] == "rok" and data["sources"] == ["films"]
    assert set(data["entities"][0]) == {"iri", "label", "source"}
    path = data["evidence"]["paths"][0]
    assert {"hops", "nodes", "text", "source", "score", "key_entities"} <= set(path)
    assert path["hops"][0]["triple"]["subject"]["type"] == "uri"
    fact = data["evidence"]["triples"][0]
    assert {"subject", "predicate", "object", "source", "text", "role"} <= set(fact)
    step = data["steps"][0]
    assert set(step) == {
        "name",
        "seconds",
        "prompt",
        "raw",
        "parsed",
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "sparql_queries",
        "notes",
    }
    usage = data["usage"]
    assert {
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "sparql_queries",
        "seconds",
        "by_step",
    } <= set(usage)
    assert set(usage["by_step"]["answer"]) == {
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "sparql_queries",
        "seconds",
    }


def test_turtle_is_prov_and_uses_only_declared_terms(answer: Answer) -> None:
    graph = rdflib.Graph().parse(data=answer_turtle(answer), format="turtle")
    vocabulary = rdflib.Graph().parse(resource_dir("ontologies") / "kgmw-answers.ttl")
    declared = set(vocabulary.subjects())
    used = {
        t
        for triple in graph
        for t in triple
        if isinstance(t, rdflib.URIRef) and str(t).startswith(str(KGMW))
    }
    assert used and used <= declared, used - declared
    (node,) = graph.subjects(RDF.type, KGMW.Answer)
    (run,) = graph.objects(node, PROV.wasGeneratedBy)
    assert (run, RDF.type, KGMW.MethodRun) in graph
    assert str(graph.value(node, KGMW.text)) == "James Cameron"
    assert str(graph.value(run, KGMW.method)) == "rok"
    assert int(graph.value(run, KGMW.llmCalls)) == 4
    assert (node, KGMW.answerEntity, rdflib.URIRef(answer.entities[0].iri)) in graph
    (question,) = graph.subjects(RDF.type, KGMW.Question)
    assert (run, PROV.used, question) in graph
    assert str(graph.value(question, KGMW.text)) == 'Who directed "Titanic" with Kate Winslet?'
    statements = list(graph.subjects(RDF.type, KGMW.EvidenceStatement))
    assert len(statements) == len(answer.evidence.all_triples())
    for statement in statements:
        assert str(graph.value(statement, KGMW.source)) == "films"
        assert graph.value(statement, RDF.subject) is not None
    assert len(list(graph.objects(run, KGMW.hasStep))) == len(answer.steps)


def test_vocabulary_subclasses_prov() -> None:
    vocabulary = rdflib.Graph().parse(resource_dir("ontologies") / "kgmw-answers.ttl")
    rdfs = rdflib.RDFS
    assert (KGMW.Answer, rdfs.subClassOf, PROV.Entity) in vocabulary
    assert (KGMW.MethodRun, rdfs.subClassOf, PROV.Activity) in vocabulary
    assert (KGMW.Step, rdfs.subClassOf, PROV.Activity) in vocabulary

"""The Answer's JSON and RDF forms."""

from __future__ import annotations

import dataclasses
import json

import pytest
import rdflib
from rdflib.collection import Collection
from rdflib.namespace import RDF

from middleware.kg.backends.local import LocalStore
from middleware.llm.scripted import ScriptedLLM
from middleware.methods.answer import NOT_FOUND, Answer, AnswerEntity, Guess
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
        "confidence_basis",
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
    assert data["found"] is True and data["guess"] is None
    assert set(data["support"][0]) == {"from", "to", "text", "triples", "weak_link"}
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


def _kgmw_terms(graph: rdflib.Graph) -> set[rdflib.URIRef]:
    return {
        t
        for triple in graph
        for t in triple
        if isinstance(t, rdflib.URIRef) and str(t).startswith(str(KGMW))
    }


def test_turtle_gives_the_chains_that_support_the_answer(answer: Answer) -> None:
    graph = rdflib.Graph().parse(data=answer_turtle(answer), format="turtle")
    (node,) = graph.subjects(RDF.type, KGMW.Answer)
    assert graph.value(node, KGMW.found) == rdflib.Literal(True)
    chains = list(graph.objects(node, KGMW.supportedBy))
    assert len(chains) == len(answer.support) > 0
    first = answer.support[0]
    chain = next(c for c in chains if int(graph.value(c, KGMW.position)) == 1)
    assert (chain, RDF.type, KGMW.SupportChain) in graph
    assert graph.value(chain, KGMW.fromEntity) == rdflib.URIRef(first.start)
    assert graph.value(chain, KGMW.toEntity) == rdflib.URIRef(first.answer)
    assert str(graph.value(chain, KGMW.text)) == first.text
    statements = list(Collection(graph, graph.value(chain, KGMW.statements)))
    assert [
        (graph.value(s, RDF.subject), graph.value(s, RDF.predicate), graph.value(s, RDF.object))
        for s in statements
    ] == [
        (
            rdflib.URIRef(t.subject.value),
            rdflib.URIRef(t.predicate.value),
            rdflib.URIRef(t.object.value),
        )
        for t in first.triples
    ]
    assert all((s, RDF.type, KGMW.EvidenceStatement) in graph for s in statements)
    assert (chain, KGMW.weakLink, None) not in graph


def test_turtle_does_not_assert_a_withheld_answer(answer: Answer) -> None:
    """Not found: the Answer has no text and no entities; the guess is a node of its own."""
    ridley = "https://kgmw.dev/metaqa/entity/Ridley%20Scott"
    why = "no evidence joins an entity the question names to the answer"
    withheld = dataclasses.replace(
        answer,
        answer=NOT_FOUND,
        found=False,
        grounded=False,
        confidence=0.0,
        entities=[],
        support=[],
        guess=Guess("Ridley Scott", 0.2, [AnswerEntity(ridley, "Ridley Scott", "films")], why),
    )
    graph = rdflib.Graph().parse(data=answer_turtle(withheld), format="turtle")
    vocabulary = rdflib.Graph().parse(resource_dir("ontologies") / "kgmw-answers.ttl")
    assert _kgmw_terms(graph) <= set(vocabulary.subjects())
    (node,) = graph.subjects(RDF.type, KGMW.Answer)
    assert graph.value(node, KGMW.found) == rdflib.Literal(False)
    assert graph.value(node, KGMW.text) is None
    assert list(graph.objects(node, KGMW.answerEntity)) == []
    assert list(graph.objects(node, KGMW.supportedBy)) == []
    guess = graph.value(node, KGMW.guess)
    assert (guess, RDF.type, KGMW.Guess) in graph
    assert str(graph.value(guess, KGMW.text)) == "Ridley Scott"
    assert float(graph.value(guess, KGMW.confidence)) == pytest.approx(0.2)
    assert str(graph.value(guess, KGMW.reason)) == why
    assert graph.value(guess, KGMW.guessEntity) == rdflib.URIRef(ridley)
    assert graph.value(guess, PROV.wasGeneratedBy) == graph.value(node, PROV.wasGeneratedBy)
    assert (None, KGMW.answerEntity, rdflib.URIRef(ridley)) not in graph
    said = set(graph.predicates(guess, None))
    domains = {vocabulary.value(p, rdflib.RDFS.domain) for p in said}
    assert KGMW.Answer not in domains, "the vocabulary would make the guess an answer"


def test_vocabulary_subclasses_prov() -> None:
    vocabulary = rdflib.Graph().parse(resource_dir("ontologies") / "kgmw-answers.ttl")
    rdfs = rdflib.RDFS
    assert (KGMW.Answer, rdfs.subClassOf, PROV.Entity) in vocabulary
    assert (KGMW.MethodRun, rdfs.subClassOf, PROV.Activity) in vocabulary
    assert (KGMW.Step, rdfs.subClassOf, PROV.Activity) in vocabulary
    assert (KGMW.Guess, rdfs.subClassOf, PROV.Entity) in vocabulary

"""An ``Answer`` as RDF in the vocabulary of ``ontologies/kgmw-answers.ttl`` (PROV-O aligned).

The run is a ``prov:Activity`` that used the question and the evidence statements and
generated the answer; each step is an activity of its own with its costs. Evidence
triples are reified (``rdf:subject/predicate/object``) and keep their source name.
The answer says whether it was ``found``; each chain that supports it is a
``kgmw:SupportChain`` (from the question's entity to the answer's, its statements as an
``rdf:List`` in order). An answer the graph does not hold has no text and no entities:
what the method would have said is a ``kgmw:Guess`` of its own, never the answer.
"""

from __future__ import annotations

import uuid

from pyoxigraph import BlankNode as OxBlank
from pyoxigraph import Literal as OxLiteral
from pyoxigraph import NamedNode as OxNamed
from rdflib import RDF, RDFS, BNode, Graph, Literal, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from middleware.kg.base import Triple
from middleware.kg.terms import Term
from middleware.methods.answer import Answer, Guess, Step, Support, Usage

KGMW = Namespace("https://kgmw.dev/ns#")
PROV = Namespace("http://www.w3.org/ns/prov#")
XSD = Namespace("http://www.w3.org/2001/XMLSchema#")


def _term(term: Term) -> Node:
    if isinstance(term, OxNamed):
        return URIRef(term.value)
    if isinstance(term, OxBlank):
        return BNode(term.value)
    if isinstance(term, OxLiteral):
        if term.language:
            return Literal(term.value, lang=term.language)
        datatype = term.datatype.value if term.datatype is not None else None
        return Literal(term.value, datatype=URIRef(datatype) if datatype else None)
    raise TypeError(f"not an RDF term: {term!r}")


class _Writer:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.graph = Graph()
        self.graph.bind("kgmw", KGMW)
        self.graph.bind("prov", PROV)
        self.base = f"urn:uuid:{uuid.uuid4()}"
        self.statements: dict[tuple[str, str, str], URIRef] = {}

    def node(self, name: str) -> URIRef:
        return URIRef(f"{self.base}#{name}")

    def add(self, s: Node, p: Node, o: Node) -> None:
        self.graph.add((s, p, o))

    def statement(self, triple: Triple, text: str | None, role: str) -> URIRef:
        key = triple.key()
        if key in self.statements:
            return self.statements[key]
        node = self.node(f"statement-{len(self.statements) + 1}")
        self.statements[key] = node
        self.add(node, RDF.type, KGMW.EvidenceStatement)
        self.add(node, RDF.subject, _term(triple.subject))
        self.add(node, RDF.predicate, _term(triple.predicate))
        self.add(node, RDF.object, _term(triple.object))
        self.add(node, KGMW.role, Literal(role))
        if triple.source:
            self.add(node, KGMW.source, Literal(triple.source))
        if text:
            self.add(node, KGMW.text, Literal(text))
        return node

    def costs(self, node: URIRef, spent: Step | Usage) -> None:
        for count, prop in (
            (spent.llm_calls, KGMW.llmCalls),
            (spent.prompt_tokens, KGMW.promptTokens),
            (spent.completion_tokens, KGMW.completionTokens),
            (spent.sparql_queries, KGMW.sparqlQueries),
        ):
            self.add(node, prop, Literal(count, datatype=XSD.integer))
        self.add(node, KGMW.seconds, Literal(f"{spent.seconds:.4f}", datatype=XSD.decimal))

    def support(self, answer: URIRef, chain: Support, position: int) -> None:
        """A chain of evidence statements from a question entity to an answer entity."""
        node = self.node(f"support-{position}")
        self.add(answer, KGMW.supportedBy, node)
        self.add(node, RDF.type, KGMW.SupportChain)
        self.add(node, KGMW.position, Literal(position, datatype=XSD.integer))
        self.add(node, KGMW.fromEntity, URIRef(chain.start))
        self.add(node, KGMW.toEntity, URIRef(chain.answer))
        self.add(node, KGMW.text, Literal(chain.text))
        if chain.weak:
            self.add(node, KGMW.weakLink, Literal(chain.weak))
        statements: list[Node] = [self.statement(t, None, "support") for t in chain.triples]
        head = BNode()
        Collection(self.graph, head, statements)
        self.add(node, KGMW.statements, head)

    def guess(self, answer: URIRef, run: URIRef, guess: Guess) -> None:
        """What the method would have answered, withheld by the answer policy."""
        node = self.node("guess")
        self.add(answer, KGMW.guess, node)
        self.add(node, RDF.type, KGMW.Guess)
        self.add(node, PROV.wasGeneratedBy, run)
        self.add(node, KGMW.text, Literal(guess.answer))
        self.add(node, KGMW.confidence, Literal(f"{guess.confidence:.4f}", datatype=XSD.decimal))
        self.add(node, KGMW.reason, Literal(guess.why))
        for entity in guess.entities:
            iri = URIRef(entity.iri)
            self.add(node, KGMW.guessEntity, iri)
            if entity.label:
                self.add(iri, RDFS.label, Literal(entity.label))

    def write(self) -> str:
        a = self.answer
        run, answer, question = self.node("run"), self.node("answer"), self.node("question")
        self.add(run, RDF.type, KGMW.MethodRun)
        self.add(run, KGMW.method, Literal(a.method))
        self.add(run, PROV.used, question)
        self.add(run, PROV.generated, answer)
        self.costs(run, a.usage)
        self.add(question, RDF.type, KGMW.Question)
        self.add(question, KGMW.text, Literal(a.question))
        for choice in a.choices or []:
            self.add(question, KGMW.choice, Literal(choice))
        self.add(answer, RDF.type, KGMW.Answer)
        if a.found:  # a withheld answer is not asserted: it is the guess
            self.add(answer, KGMW.text, Literal(a.answer))
        self.add(answer, KGMW.found, Literal(a.found))
        self.add(answer, KGMW.answers, question)
        self.add(answer, PROV.wasGeneratedBy, run)
        self.add(answer, KGMW.grounding, Literal(a.grounding))
        self.add(answer, KGMW.grounded, Literal(a.grounded))
        self.add(answer, KGMW.confidence, Literal(f"{a.confidence:.4f}", datatype=XSD.decimal))
        for warning in a.warnings:
            self.add(answer, KGMW.warning, Literal(warning))
        for entity in a.entities:
            iri = URIRef(entity.iri)
            self.add(answer, KGMW.answerEntity, iri)
            if entity.label:
                self.add(iri, RDFS.label, Literal(entity.label))
        for i, path in enumerate(a.evidence.paths, 1):
            node = self.node(f"path-{i}")
            self.add(node, RDF.type, KGMW.EvidencePath)
            self.add(node, KGMW.text, Literal(path.text))
            self.add(node, KGMW.position, Literal(i, datatype=XSD.integer))
            if path.score is not None:
                self.add(node, KGMW.score, Literal(f"{path.score:.6f}", datatype=XSD.decimal))
            if path.key_entities is not None:
                self.add(node, KGMW.keyEntities, Literal(path.key_entities, datatype=XSD.integer))
            for j, hop in enumerate(path.path.hops, 1):
                hop_node = self.node(f"path-{i}-hop-{j}")
                self.add(node, KGMW.hasHop, hop_node)
                self.add(hop_node, RDF.type, KGMW.PathHop)
                self.add(hop_node, KGMW.position, Literal(j, datatype=XSD.integer))
                self.add(hop_node, KGMW.forward, Literal(hop.forward))
                self.add(hop_node, KGMW.statement, self.statement(hop.triple, None, "path"))
            self.add(run, PROV.used, node)
            self.add(answer, PROV.wasDerivedFrom, node)
        for item in a.evidence.triples:
            node = self.statement(item.triple, item.text, item.role)
            self.add(run, PROV.used, node)
            self.add(answer, PROV.wasDerivedFrom, node)
        for i, chain in enumerate(a.support, 1):
            self.support(answer, chain, i)
        if a.guess is not None:
            self.guess(answer, run, a.guess)
        for i, step in enumerate(a.steps, 1):
            node = self.node(f"step-{i}")
            self.add(run, KGMW.hasStep, node)
            self.add(node, RDF.type, KGMW.Step)
            self.add(node, KGMW.name, Literal(step.name))
            self.add(node, KGMW.position, Literal(i, datatype=XSD.integer))
            self.costs(node, step)
            if step.prompt is not None:
                self.add(node, KGMW.prompt, Literal(step.prompt))
            if step.raw is not None:
                self.add(node, KGMW.rawOutput, Literal(step.raw))
            for note in step.notes:
                self.add(node, KGMW.note, Literal(note))
        return self.graph.serialize(format="turtle")


def answer_turtle(answer: Answer) -> str:
    """Turtle text of ``answer``; every ``kgmw:`` term it uses is in the vocabulary file."""
    return _Writer(answer).write()

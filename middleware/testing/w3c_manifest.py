"""The query evaluation tests of the W3C SPARQL 1.1 suites, read from their manifests.

A checkout (or extract) of https://github.com/w3c/rdf-tests holds one folder per
feature under ``sparql/sparql11/``, each with a ``manifest.ttl`` listing its tests.
``query_cases`` returns every ``mf:QueryEvaluationTest`` (and ``mf:CSVResultFormatTest``)
of them: the query, the files loaded into the default graph (``qt:data``) and into
named graphs (``qt:graphData``), the expected result (``mf:result``). Files get IRIs
under ``BASE`` (where the suites are published), so relative IRIs in queries, data and
results resolve as the suites mean them to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Store

BASE = "https://w3c.github.io/rdf-tests/"
SUITES = "sparql/sparql11"
MF = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#"
SD = "http://www.w3.org/ns/sparql-service-description#"
QT = "http://www.w3.org/2001/sw/DataAccess/tests/test-query#"
RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
RDF_FIRST = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#first")
RDF_REST = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#rest")
RDFS_LABEL = NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
KINDS = {MF + "QueryEvaluationTest": "query", MF + "CSVResultFormatTest": "csv"}
_SERVICE = re.compile(r"\bSERVICE\b", re.IGNORECASE)


@dataclass(frozen=True)
class QueryCase:
    """One query evaluation test; ``skip`` says why it cannot run here, if it cannot."""

    id: str  # folder/name, e.g. "aggregates/agg01"
    kind: str  # "query", or "csv" for a CSV result format test
    query: Path
    query_iri: str
    data: tuple[tuple[Path, str], ...]  # (file, its IRI) loaded into the default graph
    graphs: tuple[tuple[Path, str, str], ...]  # (file, its IRI, the graph's name)
    result: Path
    result_iri: str
    entailment: bool  # asks for an entailment regime (Oxigraph evaluates none)
    skip: str | None = None


def query_cases(root: Path) -> list[QueryCase]:
    """Every query evaluation test of every ``sparql/sparql11/*/manifest.ttl`` under
    ``root`` (a checkout of w3c/rdf-tests), in manifest order."""
    manifests = sorted((root / SUITES).glob("*/manifest.ttl"))
    if not manifests:
        raise FileNotFoundError(f"no {SUITES}/*/manifest.ttl under {root}")
    return [case for manifest in manifests for case in _read(root, manifest)]


def iri_of(root: Path, path: Path) -> str:
    """The published IRI of a file of the suites."""
    return BASE + path.relative_to(root).as_posix()


def _read(root: Path, manifest: Path) -> list[QueryCase]:
    graph = Store()
    graph.load(path=str(manifest), format=RdfFormat.TURTLE, base_iri=iri_of(root, manifest))
    order = {name: index for index, name in enumerate(_entries(graph))}
    tests = sorted(
        (order.get(quad.subject.value, len(order)), quad.subject, KINDS[quad.object.value])
        for quad in graph.quads_for_pattern(None, RDF_TYPE, None)
        if isinstance(quad.object, NamedNode)
        and quad.object.value in KINDS
        and isinstance(quad.subject, NamedNode)
    )
    return [_case(root, manifest.parent, graph, test, kind) for _, test, kind in tests]


def _case(root: Path, folder: Path, graph: Store, test: NamedNode, kind: str) -> QueryCase:
    action = _node(_one(graph, test, MF + "action"))
    query = _file(root, _one(graph, action, QT + "query"))
    result = _file(root, _one(graph, test, MF + "result"))
    data = tuple((_file(root, d), _iri(d)) for d in _all(graph, action, QT + "data"))
    named = []
    for node in _all(graph, action, QT + "graphData"):
        if isinstance(node, BlankNode):  # [ qt:graph <file> ; rdfs:label "name" ]
            file = _one(graph, node, QT + "graph")
            named.append((_file(root, file), _iri(file), _one(graph, node, RDFS_LABEL).value))
        else:
            named.append((_file(root, node), _iri(node), _iri(node)))
    skip = None
    if _all(graph, action, QT + "serviceData") or _SERVICE.search(query.read_text("utf-8")):
        skip = "needs SERVICE endpoints"
    return QueryCase(
        id=f"{folder.name}/{test.value.rsplit('#', 1)[-1]}",
        kind=kind,
        query=query,
        query_iri=iri_of(root, query),
        data=data,
        graphs=tuple(named),
        result=result,
        result_iri=iri_of(root, result),
        entailment=bool(_all(graph, action, SD + "entailmentRegime")),
        skip=skip,
    )


def _entries(graph: Store) -> list[str]:
    """The IRIs of the tests in the manifest's ``mf:entries`` list, in order."""
    names: list[str] = []
    for quad in graph.quads_for_pattern(None, NamedNode(MF + "entries"), None):
        node = quad.object
        while isinstance(node, BlankNode):
            names.append(_one(graph, node, RDF_FIRST).value)
            node = _one(graph, node, RDF_REST)
    return names


Node = NamedNode | BlankNode | Literal


def _all(graph: Store, subject: NamedNode | BlankNode, predicate: str | NamedNode) -> list[Node]:
    named = predicate if isinstance(predicate, NamedNode) else NamedNode(predicate)
    found = [quad.object for quad in graph.quads_for_pattern(subject, named, None)]
    return [node for node in found if isinstance(node, NamedNode | BlankNode | Literal)]


def _one(graph: Store, subject: NamedNode | BlankNode, predicate: str | NamedNode) -> Node:
    found = _all(graph, subject, predicate)
    if len(found) != 1:
        raise ValueError(f"{subject} has {len(found)} values for {predicate}, not one")
    return found[0]


def _node(node: Node) -> NamedNode | BlankNode:
    if isinstance(node, Literal):
        raise ValueError(f"a literal {node} where the manifest needs a node")
    return node


def _iri(node: Node) -> str:
    if not isinstance(node, NamedNode):
        raise ValueError(f"{node} is not an IRI")
    return node.value


def _file(root: Path, node: Node) -> Path:
    iri = _iri(node)
    if not iri.startswith(BASE):
        raise ValueError(f"{iri} does not name a file of the suites")
    return root / iri.removeprefix(BASE)

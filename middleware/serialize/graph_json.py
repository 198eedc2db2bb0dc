"""JSON forms of terms, triples, paths and entities (SPARQL 1.1 JSON term shape).

>>> from pyoxigraph import Literal, NamedNode
>>> term_json(Literal("1997", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#gYear")))
{'type': 'literal', 'value': '1997', 'datatype': 'http://www.w3.org/2001/XMLSchema#gYear'}
"""

from __future__ import annotations

from typing import Any

from pyoxigraph import BlankNode, NamedNode

from middleware.kg.base import Entity, Path, QueryResult, Triple
from middleware.kg.terms import Term

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


def term_json(term: Term) -> dict[str, str]:
    if isinstance(term, NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BlankNode):
        return {"type": "bnode", "value": term.value}
    body = {"type": "literal", "value": term.value}
    if term.language:
        body["xml:lang"] = term.language
    elif term.datatype is not None and term.datatype.value != XSD_STRING:
        body["datatype"] = term.datatype.value
    return body


def triple_json(triple: Triple, text: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "subject": term_json(triple.subject),
        "predicate": term_json(triple.predicate),
        "object": term_json(triple.object),
        "source": triple.source,
    }
    if text is not None:
        body["text"] = text
    return body


def path_json(path: Path, text: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "hops": [{"triple": triple_json(h.triple), "forward": h.forward} for h in path.hops],
        "nodes": [term_json(n) for n in path.nodes],
    }
    if text is not None:
        body["text"] = text
    return body


def entity_json(entity: Entity) -> dict[str, Any]:
    return {
        "iri": entity.iri.value,
        "label": entity.label,
        "source": entity.source,
        "aliases": list(entity.aliases),
        "description": entity.description,
        "score": entity.score,
        "match": entity.match,
    }


def result_json(result: QueryResult) -> dict[str, Any]:
    """SPARQL 1.1 Query Results JSON for SELECT/ASK; a triple list for graph results."""
    if result.kind == "ask":
        return {"head": {}, "boolean": result.boolean}
    if result.kind == "graph":
        return {"triples": [[term_json(t) for t in triple] for triple in result.triples]}
    return {
        "head": {"vars": result.variables},
        "results": {"bindings": [{k: term_json(v) for k, v in row.items()} for row in result.rows]},
    }

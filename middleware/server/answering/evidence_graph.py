"""An answer's evidence as nodes and labelled edges, ready to draw.

Nodes are the entities and literals of the evidence triples, with their labels; edges
are the triples, labelled with the relation's reading. Entities the answer names are
marked, so a drawing can pick them out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from pyoxigraph import Literal, NamedNode

from middleware.kg.base import KnowledgeGraph, Triple
from middleware.kg.terms import Term
from middleware.methods.answer import Answer
from middleware.text.verbalize import Verbalizer

MAX_EDGES = 200


def node_id(term: Term) -> str:
    if isinstance(term, Literal):
        return "lit:" + hashlib.sha1(str(term).encode()).hexdigest()[:12]
    return term.value


def evidence_graph(answer: Answer, graphs: Mapping[str, KnowledgeGraph]) -> dict[str, Any]:
    """``{"nodes": [...], "edges": [...]}`` for ``answer``'s evidence, labels from ``graphs``.

    Each node: ``id``, ``iri`` (None for a literal or blank node), ``label``, ``kind`` (entity or
    literal), ``answer`` (named by the answer), ``source``. Each edge: ``source``,
    ``target``, ``label``, ``predicate`` (the relation's IRI), ``role`` (path or the
    triple's role), ``graph`` (the source graph's name).
    """
    answer_iris = {entity.iri for entity in answer.entities}
    roles: dict[tuple[str, str, str], tuple[Triple, str]] = {}
    for path in answer.evidence.paths:
        for hop in path.path.hops:
            roles.setdefault(hop.triple.key(), (hop.triple, "path"))
    for fact in answer.evidence.triples:
        roles.setdefault(fact.triple.key(), (fact.triple, fact.role))
    triples = list(roles.values())[:MAX_EDGES]
    verbalizers: dict[str | None, Verbalizer] = {}
    for triple, _ in triples:
        if triple.source not in verbalizers:
            verbalizers[triple.source] = Verbalizer(graphs.get(triple.source or ""))
    for source, verbalizer in verbalizers.items():
        terms = [
            t
            for tr, _ in triples
            if tr.source == source
            for t in (tr.subject, tr.predicate, tr.object)
        ]
        verbalizer.prepare(terms)
    nodes: dict[str, dict[str, Any]] = {}
    edges: list[dict[str, Any]] = []
    for triple, role in triples:
        verbalizer = verbalizers[triple.source]
        for term in (triple.subject, triple.object):
            key = node_id(term)
            if key not in nodes:
                nodes[key] = {
                    "id": key,
                    "iri": term.value if isinstance(term, NamedNode) else None,
                    "label": verbalizer.name(term),
                    "kind": "literal" if isinstance(term, Literal) else "entity",
                    "answer": isinstance(term, NamedNode) and term.value in answer_iris,
                    "source": triple.source,
                }
        edges.append(
            {
                "source": node_id(triple.subject),
                "target": node_id(triple.object),
                "label": verbalizer.relation(triple.predicate),
                "predicate": triple.predicate.value,
                "role": role,
                "graph": triple.source,
            }
        )
    return {"nodes": list(nodes.values()), "edges": edges}

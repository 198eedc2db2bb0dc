"""Terms and paths read from the rows of the project's SPARQL templates."""

from __future__ import annotations

from pyoxigraph import BlankNode, Literal, NamedNode

from middleware.errors import BadRequest
from middleware.kg.base import Hop, Path, Triple
from middleware.kg.terms import Node, Term


def predicate_of(term: Term) -> NamedNode:
    """``term`` as a predicate; anything but an IRI is a BadRequest."""
    if not isinstance(term, NamedNode):
        raise BadRequest(f"expected an IRI for a predicate, got {term}")
    return term


def subject_of(term: Term) -> Node:
    """``term`` as a subject; a literal is a BadRequest."""
    if isinstance(term, Literal):
        raise BadRequest(f"a literal cannot be a subject: {term}")
    return term


def as_bool(term: Term) -> bool:
    return isinstance(term, Literal) and term.value in ("true", "1")


def path_of_row(
    row: dict[str, Term], start: NamedNode, end: NamedNode, length: int, graph: str
) -> Path:
    """The path a ``paths_N`` row describes from ``start`` to ``end``: its inner nodes
    ``m1``.., and per hop its predicate ``pN`` and whether it was walked forward ``dN``."""
    nodes: list[Term] = [start, *(row[f"m{i}"] for i in range(1, length)), end]
    hops = []
    for i in range(length):
        here, there = nodes[i], nodes[i + 1]
        forward = as_bool(row[f"d{i + 1}"])
        predicate = predicate_of(row[f"p{i + 1}"])
        triple = (
            Triple(subject_of(here), predicate, there, graph)
            if forward
            else Triple(subject_of(there), predicate, here, graph)
        )
        hops.append(Hop(triple, forward))
    return Path(tuple(hops))


def path_order(path: Path) -> tuple[tuple[tuple[int, str], ...], tuple[tuple[bool, str], ...]]:
    """The order of the ``paths_N`` templates (``ORDER BY ?m1 ?m2 DESC(?d1) ?p1 ...``)
    for a path read from its first node: inner nodes (blank nodes before IRIs), then
    each hop forward first, by predicate."""
    inner = tuple((0 if isinstance(n, BlankNode) else 1, n.value) for n in path.nodes[1:-1])
    return inner, tuple((not hop.forward, hop.triple.predicate.value) for hop in path.hops)

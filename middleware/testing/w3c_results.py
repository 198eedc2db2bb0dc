"""Query results as the W3C suites compare them: solutions as a multiset, graphs up to
blank node names.

An ``Outcome`` is read from an expected result file (SPARQL results XML ``.srx``,
JSON ``.srj``, ``.tsv``, ``.csv``; a Turtle or RDF/XML graph, either a ``CONSTRUCT``
result or a result set in the ``rs:`` vocabulary), from the engine's own result, or
from a ``/sparql`` response. Files and responses are parsed by pyoxigraph, which keeps
every literal's lexical form (rdflib would normalise ``"01"^^xsd:integer`` to ``"1"``).
``same`` compares two outcomes: rows without blank nodes as a multiset; rows with blank
nodes, and graphs, by rdflib's graph isomorphism. Order is not compared. CSV loses
types, so CSV outcomes are compared as text rows, blank node labels left out.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pyoxigraph as ox
import rdflib
from rdflib.compare import isomorphic

RS = "http://www.w3.org/2001/sw/DataAccess/tests/result-set#"
XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"
XSD_BOOLEAN = ox.NamedNode(XSD + "boolean")
_INTEGERS = frozenset(
    [
        "integer",
        "nonPositiveInteger",
        "negativeInteger",
        "long",
        "int",
        "short",
        "byte",
        "nonNegativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
        "positiveInteger",
    ]
)
_RESULTS = {
    ".srx": ox.QueryResultsFormat.XML,
    ".srj": ox.QueryResultsFormat.JSON,
    ".tsv": ox.QueryResultsFormat.TSV,
}
MEDIA = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
Row = dict[str, ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple]


@dataclass(frozen=True)
class Outcome:
    """A query's result: ``kind`` is boolean, solutions, graph or csv."""

    kind: str
    boolean: bool | None = None
    rows: tuple[Row, ...] = ()
    triples: tuple[ox.Triple, ...] = ()
    csv: tuple[tuple[str, ...], ...] = field(default=())

    def describe(self) -> str:
        if self.kind == "boolean":
            return f"boolean {self.boolean}"
        count = len(self.rows) if self.kind == "solutions" else len(self.triples or self.csv)
        return f"{self.kind} ({count})"


def expected(path: Path, iri: str, kind: str) -> Outcome:
    """The outcome a result file of the suites holds (``kind`` "csv": as CSV text)."""
    if kind == "csv":
        return csv_outcome(path.read_text("utf-8"))
    if path.suffix in _RESULTS:
        return results_outcome(ox.parse_query_results(path=str(path), format=_RESULTS[path.suffix]))
    format = ox.RdfFormat.from_extension(path.suffix.lstrip("."))
    triples = [q.triple for q in ox.parse(path=str(path), format=format, base_iri=iri)]
    return result_set(triples) or Outcome("graph", triples=tuple(triples))


def engine(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples) -> Outcome:
    """The outcome of the engine's own result."""
    if isinstance(result, ox.QueryTriples):
        return Outcome("graph", triples=tuple(result))
    return results_outcome(result)


def response(body: bytes, content_type: str) -> Outcome:
    """The outcome a ``/sparql`` response carries, by its media type."""
    media = content_type.split(";")[0].strip().lower()
    if media == "text/csv":
        return csv_outcome(body.decode("utf-8"))
    if media in MEDIA:
        return results_outcome(ox.parse_query_results(body, MEDIA[media]))
    format = ox.RdfFormat.from_media_type(media)
    if format is None:
        raise ValueError(f"a response in {media!r}")
    return Outcome("graph", triples=tuple(q.triple for q in ox.parse(body, format)))


def results_outcome(result: ox.QuerySolutions | ox.QueryBoolean) -> Outcome:
    if isinstance(result, ox.QueryBoolean):
        return Outcome("boolean", boolean=bool(result))
    names = [v.value for v in result.variables]
    rows = []
    for solution in result:
        row: Row = {}
        for name in names:
            value = solution[name]
            if value is not None:
                row[name] = value
        rows.append(row)
    return Outcome("solutions", rows=tuple(rows))


def result_set(triples: Iterable[ox.Triple]) -> Outcome | None:
    """A result set written in the ``rs:`` vocabulary, or None for any other graph."""
    by_subject: dict[object, list[ox.Triple]] = {}
    for triple in triples:
        by_subject.setdefault(triple.subject, []).append(triple)

    def values(node: object, predicate: str) -> list[object]:
        return [t.object for t in by_subject.get(node, []) if t.predicate.value == RS + predicate]

    for node, found in by_subject.items():
        if not any(t.object == ox.NamedNode(RS + "ResultSet") for t in found):
            continue
        for boolean in values(node, "boolean"):
            return Outcome("boolean", boolean=boolean == ox.Literal("true", datatype=XSD_BOOLEAN))
        rows = []
        for solution in values(node, "solution"):
            row: Row = {}
            for binding in values(solution, "binding"):
                (name,) = values(binding, "variable")
                (value,) = values(binding, "value")
                assert isinstance(name, ox.Literal)
                assert isinstance(value, ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple)
                row[name.value] = value
            rows.append(row)
        return Outcome("solutions", rows=tuple(rows))
    return None


def csv_outcome(text: str) -> Outcome:
    """CSV text as rows of cells, the header first, columns in the order of their names
    (``SELECT *`` leaves the order to the engine), blank node labels left out."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return Outcome("csv")
    order = sorted(range(len(rows[0])), key=lambda i: rows[0][i])
    cells = [tuple("_:" if r[i].startswith("_:") else r[i] for i in order) for r in rows]
    return Outcome("csv", csv=tuple(cells))


def same(one: Outcome, other: Outcome, *, strict: bool = False) -> bool:
    """Whether two outcomes are the same result (see the module's docstring); with
    ``strict``, numbers and booleans must be spelled the same too."""
    if one.kind != other.kind:
        return False
    if one.kind == "boolean":
        return one.boolean == other.boolean
    if one.kind == "csv":
        head, rest = one.csv[:1], Counter(one.csv[1:])
        return head == other.csv[:1] and rest == Counter(other.csv[1:])
    if one.kind == "graph":
        return isomorphic(_graph(one.triples, strict), _graph(other.triples, strict))
    if len(one.rows) != len(other.rows):
        return False
    if not _has_blank(one.rows) and not _has_blank(other.rows):
        return Counter(_key(r, strict) for r in one.rows) == Counter(
            _key(r, strict) for r in other.rows
        )
    return isomorphic(_solutions_graph(one.rows, strict), _solutions_graph(other.rows, strict))


def _key(row: Row, strict: bool = False) -> frozenset[tuple[str, rdflib.term.Node]]:
    return frozenset((name, _term(value, strict)) for name, value in row.items())


def _has_blank(rows: Iterable[Row]) -> bool:
    return any(isinstance(v, ox.BlankNode) for row in rows for v in row.values())


def _graph(triples: Iterable[ox.Triple], strict: bool) -> rdflib.Graph:
    graph = rdflib.Graph()
    for t in triples:
        graph.add((_term(t.subject), _term(t.predicate), _term(t.object, strict)))
    return graph


def _solutions_graph(rows: Iterable[Row], strict: bool) -> rdflib.Graph:
    """Rows as a graph: one blank node per solution and per binding, so isomorphism
    matches rows as a multiset and blank node values up to their names."""
    graph = rdflib.Graph()
    for row in rows:
        solution = rdflib.BNode()
        graph.add((solution, rdflib.RDF.type, rdflib.URIRef(RS + "Solution")))
        for name, value in row.items():
            binding = rdflib.BNode()
            graph.add((solution, rdflib.URIRef(RS + "binding"), binding))
            graph.add((binding, rdflib.URIRef(RS + "variable"), rdflib.Literal(name)))
            graph.add((binding, rdflib.URIRef(RS + "value"), _term(value, strict)))
    return graph


def _term(term: object, strict: bool = False) -> rdflib.term.Node:
    """A pyoxigraph term as rdflib's: a number or boolean in one canonical form (the
    suites' results write ``1.0`` where an engine may write ``1``) unless ``strict``,
    any other literal's lexical form untouched."""
    if isinstance(term, ox.NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return rdflib.BNode(f"b{term.value}")
    if isinstance(term, ox.Literal):
        if term.language:
            return rdflib.Literal(term.value, lang=term.language, normalize=False)
        datatype = term.datatype.value
        if datatype == XSD_STRING:
            return rdflib.Literal(term.value, normalize=False)
        value = term.value if strict else _canonical(term.value, datatype)
        return rdflib.Literal(value, datatype=rdflib.URIRef(datatype), normalize=False)
    raise ValueError(f"no rdflib term for {term!r}")


def _canonical(lexical: str, datatype: str) -> str:
    """One spelling per value of XSD's numeric types and booleans; any other literal,
    or a lexical form that is not a valid one, as it is."""
    kind, text = datatype.removeprefix(XSD), lexical.strip()
    try:
        if kind in _INTEGERS:
            return str(int(text))
        if kind == "decimal":
            return format(Decimal(text).normalize(), "f")
        if kind in ("float", "double"):
            return repr(float(text))
    except (ValueError, ArithmeticError):
        return lexical
    if kind == "boolean" and text in ("true", "false", "1", "0"):
        return "true" if text in ("true", "1") else "false"
    return lexical

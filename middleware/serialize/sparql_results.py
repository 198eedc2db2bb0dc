r"""SPARQL results written in the formats clients ask for: JSON, XML, CSV, TSV, RDF.

>>> from pyoxigraph import NamedNode, Literal
>>> result = QueryResult("select", variables=["s", "n"],
...     rows=[{"s": NamedNode("http://ex.org/a"), "n": Literal("A", language="en")}])
>>> write_result(result, "tsv").decode().splitlines()
['?s\t?n', '<http://ex.org/a>\t"A"@en']
"""

from __future__ import annotations

import csv
import io
import json
from xml.sax.saxutils import escape, quoteattr

import pyoxigraph as ox
from pyoxigraph import BlankNode, NamedNode

from middleware.errors import BadRequest
from middleware.kg.base import QueryResult
from middleware.kg.terms import Term
from middleware.serialize.graph_json import result_json, term_json

# format name -> media type; the first of each kind is the default
TABLE_FORMATS = {
    "json": "application/sparql-results+json",
    "xml": "application/sparql-results+xml",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
}
GRAPH_FORMATS = {
    "turtle": "text/turtle",
    "ntriples": "application/n-triples",
    "rdfxml": "application/rdf+xml",
}
# media types clients send that mean one of the formats above
ALIASES = {
    "application/json": "json",
    "application/xml": "xml",
    "text/xml": "xml",
    "text/plain": "ntriples",
    "application/x-turtle": "turtle",
}
_RDF_FORMATS = {
    "turtle": ox.RdfFormat.TURTLE,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "rdfxml": ox.RdfFormat.RDF_XML,
}


def formats_for(kind: str) -> dict[str, str]:
    """Format name to media type for a result of ``kind`` (select, ask or graph)."""
    return GRAPH_FORMATS if kind == "graph" else TABLE_FORMATS


def write_result(result: QueryResult, fmt: str) -> bytes:
    """``result`` in format ``fmt`` (a key of ``formats_for(result.kind)``)."""
    if fmt not in formats_for(result.kind):
        kinds = ", ".join(formats_for(result.kind))
        raise BadRequest(f"a {result.kind} result cannot be written as {fmt!r}; use {kinds}")
    if result.kind == "graph":
        triples = [ox.Triple(s, p, o) for s, p, o in result.triples]  # type: ignore[arg-type]
        return ox.serialize(triples, format=_RDF_FORMATS[fmt]) or b""
    if fmt == "json":
        return json.dumps(result_json(result), ensure_ascii=False).encode()
    if fmt == "xml":
        return _xml(result).encode()
    if fmt == "csv":
        return _csv(result).encode()
    return _tsv(result).encode()


def _xml(result: QueryResult) -> str:
    out = ['<?xml version="1.0"?>', '<sparql xmlns="http://www.w3.org/2005/sparql-results#">']
    if result.kind == "ask":
        out += ["<head/>", f"<boolean>{'true' if result.boolean else 'false'}</boolean>"]
    else:
        out.append("<head>")
        out += [f"<variable name={quoteattr(v)}/>" for v in result.variables]
        out += ["</head>", "<results>"]
        for row in result.rows:
            out.append("<result>")
            for name, term in row.items():
                out.append(f"<binding name={quoteattr(name)}>{_xml_term(term)}</binding>")
            out.append("</result>")
        out.append("</results>")
    out.append("</sparql>")
    return "\n".join(out) + "\n"


def _xml_term(term: Term) -> str:
    body = term_json(term)
    if body["type"] == "uri":
        return f"<uri>{escape(body['value'])}</uri>"
    if body["type"] == "bnode":
        return f"<bnode>{escape(body['value'])}</bnode>"
    attrs = ""
    if "xml:lang" in body:
        attrs = f" xml:lang={quoteattr(body['xml:lang'])}"
    elif "datatype" in body:
        attrs = f" datatype={quoteattr(body['datatype'])}"
    return f"<literal{attrs}>{escape(body['value'])}</literal>"


def _csv(result: QueryResult) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    if result.kind == "ask":
        writer.writerows([["_askResult"], ["true" if result.boolean else "false"]])
        return buffer.getvalue()
    writer.writerow(result.variables)
    for row in result.rows:
        writer.writerow([_csv_value(row.get(v)) for v in result.variables])
    return buffer.getvalue()


def _csv_value(term: Term | None) -> str:
    if term is None:
        return ""
    if isinstance(term, BlankNode):
        return f"_:{term.value}"
    return term.value


def _tsv(result: QueryResult) -> str:
    if result.kind == "ask":
        return "_askResult\n" + ("true" if result.boolean else "false") + "\n"
    lines = ["\t".join(f"?{v}" for v in result.variables)]
    for row in result.rows:
        lines.append("\t".join(_tsv_value(row.get(v)) for v in result.variables))
    return "\n".join(lines) + "\n"


def _tsv_value(term: Term | None) -> str:
    if term is None:
        return ""
    if isinstance(term, NamedNode | BlankNode):
        return str(term)
    # N-Triples form, with tabs and newlines escaped as TSV requires
    return str(term).replace("\t", "\\t").replace("\n", "\\n")

"""RdflibGraph: a user's rdflib ``Graph`` or ``Dataset`` as a source, without copying.

>>> import rdflib
>>> g = rdflib.Graph().parse(data="<http://e.org/a> <http://e.org/p> <http://e.org/b> .", format="nt")
>>> [t.object.value for t in RdflibGraph(g).neighbors("http://e.org/a")]
['http://e.org/b']
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import rdflib
from pyoxigraph import BlankNode, Literal, NamedNode
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import Query

from middleware.errors import BadRequest, EndpointTimeout
from middleware.kg.base import Capabilities, LabelRow, QueryResult, cap_result
from middleware.kg.operations import GraphOperations
from middleware.kg.profiles import Profile, load_profile
from middleware.kg.result_size import check_size, result_bytes
from middleware.kg.sparql_guard import QueryDataset, QueryPolicy
from middleware.kg.terms import Term


def services_in(node: object) -> list[str]:
    """The endpoint of every SERVICE in rdflib's algebra ``node`` (a variable endpoint
    as ``?name``), found without recursion."""
    found: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, CompValue):
            if item.name == "ServiceGraphPattern":
                term = item.get("term")
                found.append(str(term) if isinstance(term, rdflib.URIRef) else f"?{term}")
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def to_oxigraph(term: Any) -> Term:
    """An rdflib term as the pyoxigraph term the rest of the middleware uses."""
    if isinstance(term, rdflib.URIRef):
        return NamedNode(str(term))
    if isinstance(term, rdflib.BNode):
        return BlankNode(str(term))
    if isinstance(term, rdflib.Literal):
        if term.language:
            return Literal(str(term), language=term.language)
        if term.datatype is not None:
            return Literal(str(term), datatype=NamedNode(str(term.datatype)))
        return Literal(str(term))
    raise BadRequest(f"unsupported rdflib term {term!r}")


class RdflibGraph(GraphOperations):
    """Graph operations over ``graph.query`` (rdflib's own SPARQL engine)."""

    capabilities = Capabilities(label_index=True, in_process=True, templates=True)

    def __init__(
        self,
        graph: rdflib.Graph,
        *,
        profile: str | Profile | None = None,
        name: str = "rdflib",
        timeout: float = 30.0,
    ) -> None:
        self.graph = graph
        self.profile = (
            profile if isinstance(profile, Profile) else load_profile(profile or "generic")
        )
        self.name = name
        self.default_timeout = timeout
        super().__init__()

    @property
    def version(self) -> int:
        """The graph's size: a user's graph may change under us, and linking must notice."""
        return len(self.graph)

    def label_rows(self) -> Iterator[LabelRow]:
        """Every label and alias of the graph, for an in-memory index."""
        groups = [(p, False) for p in self.profile.label_predicates]
        groups += [(p, True) for p in self.profile.alias_predicates]
        for predicate, is_alias in groups:
            for subject, _, value in self.graph.triples(
                (None, rdflib.URIRef(predicate.value), None)
            ):
                if isinstance(subject, rdflib.URIRef) and isinstance(value, rdflib.Literal):
                    yield LabelRow(NamedNode(str(subject)), str(value), is_alias, value.language)

    def _execute_caller(
        self,
        sparql: str,
        timeout: float,
        max_rows: int | None,
        dataset: QueryDataset | None,
        policy: QueryPolicy,
    ) -> QueryResult:
        """rdflib fetches in this process: the endpoint of a SERVICE (read again from the
        query's text, where a string literal can stand in for it, and following
        redirects), and the IRI of every FROM and FROM NAMED (over HTTP, or a file: IRI
        from disk). The query is parsed once; a dataset clause or any SERVICE in the
        parse is refused, allowlist or not, and that same parse runs."""
        try:
            parsed = prepareQuery(sparql)
        except Exception as err:  # rdflib's parser raises many unrelated types
            raise BadRequest(f"rdflib could not parse the query: {err}") from err
        if parsed.algebra.get("datasetClause"):
            raise BadRequest(
                f"rdflib graph {self.name!r} does not take FROM or FROM NAMED: rdflib would "
                "fetch each named IRI (from the web, or a file: IRI from disk)",
                hint="name the graphs of the dataset in the query with GRAPH",
            )
        endpoints = services_in(parsed.algebra)
        if endpoints:
            raise BadRequest(
                f"SERVICE <{endpoints[0]}> is not allowed on rdflib graph {self.name!r}: "
                "rdflib would make the call itself, from this process",
                hint="query the endpoint itself, or load the graph into a local store "
                "(whose queries may call sparql_service_allowlist's endpoints)",
            )
        result = self._execute(parsed, timeout, max_rows, dataset)
        check_size(result_bytes(result), policy.limits.max_result_bytes)
        return result

    def _execute(
        self,
        sparql: str | Query,
        timeout: float,
        max_rows: int | None = None,
        dataset: QueryDataset | None = None,
    ) -> QueryResult:
        if dataset:
            raise BadRequest(
                f"rdflib graph {self.name!r} does not take default-graph-uri or named-graph-uri",
                hint="name graphs in the query with FROM or GRAPH",
            )
        deadline = time.monotonic() + timeout
        try:
            result = self.graph.query(sparql)
        except Exception as err:  # rdflib's parser and engine raise many unrelated types
            raise BadRequest(f"rdflib could not run the query: {err}") from err
        if result.type == "ASK":
            return QueryResult("ask", boolean=bool(result.askAnswer))
        if result.type in ("CONSTRUCT", "DESCRIBE"):
            built = result.graph if result.graph is not None else rdflib.Graph()
            triples = [(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o)) for s, p, o in built]
            return cap_result(QueryResult("graph", triples=triples), max_rows)
        variables = [str(v) for v in result.vars or []]
        rows: list[dict[str, Term]] = []
        for count, row in enumerate(result):
            if max_rows is not None and count >= max_rows:
                return QueryResult("select", variables=variables, rows=rows, truncated=True)
            if count % 256 == 0 and time.monotonic() > deadline:
                raise EndpointTimeout(f"rdflib graph {self.name!r}: query ran past {timeout:g} s")
            values = row.asdict()  # type: ignore[union-attr]
            rows.append({k: to_oxigraph(v) for k, v in values.items() if v is not None})
        return QueryResult("select", variables=variables, rows=rows)

"""Rows ordered by the caller: ``ORDER BY`` in an engine in this process costs more than
the query it sorts.

Oxigraph sorts by reading each term's text back from its dictionary, comparison by
comparison: at 32 M triples, ordering 2,000 walks took twice as long as finding them. So
a template for a store in this process reads its rows unsorted, and they are sorted
here when every key is an IRI (Oxigraph orders IRIs by their text, as Python does, so
the result is the engine's own) or, column by column, an ``xsd:boolean`` (false before
true). A key named ``-x`` orders by ``?x`` descending (``DESC(?x)``). Any other key (a
literal of another datatype, whose order between datatypes each engine chooses, or a
blank node) sends the query back to the engine, as a subquery of
``sparql/ordered.rq``; so does a remote engine, where sorting is the engine's job.

>>> from pyoxigraph import Literal, NamedNode
>>> order = Ordering(("n2", "n1"), limit=2)
>>> rows = [{"n1": NamedNode("urn:b"), "n2": NamedNode("urn:y")},
...         {"n1": NamedNode("urn:a"), "n2": NamedNode("urn:y")},
...         {"n1": NamedNode("urn:c"), "n2": NamedNode("urn:x")}]
>>> [(r["n2"].value, r["n1"].value) for r in order.sorted(rows)]
[('urn:x', 'urn:c'), ('urn:y', 'urn:a')]
>>> true, false = Literal(True), Literal(False)
>>> rows = [{"d": false, "p": NamedNode("urn:a")}, {"d": true, "p": NamedNode("urn:b")}]
>>> [r["p"].value for r in Ordering(("-d", "p"), limit=5).sorted(rows)]
['urn:b', 'urn:a']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode

from middleware.kg.sparql_templates import Rendered, TemplateSet
from middleware.kg.terms import Term

BOOLEAN = NamedNode("http://www.w3.org/2001/XMLSchema#boolean")


@dataclass(frozen=True)
class Ordering:
    """``ORDER BY`` the ``keys`` (variable names; ``-x``: ``DESC(?x)``), then ``LIMIT
    limit``."""

    keys: tuple[str, ...]
    limit: int

    def sorted(self, rows: list[dict[str, Term]]) -> list[dict[str, Term]] | None:
        """``rows`` ordered and cut as the engine would; None when a key's column is not
        all IRIs or all booleans."""
        columns: list[list[str] | list[bool]] = []
        for key in self.keys:
            name = key.removeprefix("-")
            values = [row.get(name) for row in rows]
            if all(isinstance(v, NamedNode) for v in values):
                columns.append([v.value for v in values if isinstance(v, NamedNode)])
            elif all(
                isinstance(v, Literal) and v.datatype == BOOLEAN and v.value in ("true", "false")
                for v in values
            ):  # a boolean of another lexical form ("TRUE", "1") sorts as the engine chooses
                columns.append([v.value == "true" for v in values if isinstance(v, Literal)])
            else:
                return None
        order = list(range(len(rows)))
        # stable sorts, the last key first: equal rows keep the engine's read order
        for key, column in zip(reversed(self.keys), reversed(columns), strict=True):
            order.sort(key=column.__getitem__, reverse=key.startswith("-"))
        return [rows[i] for i in order[: self.limit]]


def rows_in_order(
    order: Ordering | None,
    text: Rendered,
    run: Callable[[str], list[dict[str, Term]]],
    *,
    in_process: bool,
    templates: TemplateSet,
) -> list[dict[str, Term]]:
    """The rows of the rendered template ``text`` (``run`` runs a query); with ``order``,
    ordered and cut: here when the engine is in this process and every key is an IRI,
    else by the engine."""
    if order is None:
        return run(text)
    if in_process:
        rows = order.sorted(run(text))
        if rows is not None:
            return rows
    return run(templates.render("ordered", query=text, keys=order.keys, limit=order.limit))

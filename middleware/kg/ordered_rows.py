"""Rows ordered by the caller: ``ORDER BY`` in an engine in this process costs more than
the query it sorts.

Oxigraph sorts by reading each term's text back from its dictionary, comparison by
comparison: at 32 M triples, ordering 2,000 walks took twice as long as finding them. So
a template for a store in this process reads its rows unsorted, and they are sorted
here when every key is an IRI (IRIs order by their text in any engine, so the result is
the engine's own). Any other key (a literal, whose order between datatypes each engine
chooses, or a blank node) sends the query back to the engine, wrapped in the
``ORDER BY``; so does a remote engine, where sorting is the engine's job.

>>> from pyoxigraph import NamedNode
>>> order = Ordering(("n2", "n1"), limit=2)
>>> rows = [{"n1": NamedNode("urn:b"), "n2": NamedNode("urn:y")},
...         {"n1": NamedNode("urn:a"), "n2": NamedNode("urn:y")},
...         {"n1": NamedNode("urn:c"), "n2": NamedNode("urn:x")}]
>>> [(r["n2"].value, r["n1"].value) for r in order.sorted(rows)]
[('urn:x', 'urn:c'), ('urn:y', 'urn:a')]
>>> print(order.query("SELECT ?n1 ?n2 WHERE { ?n1 ?p ?n2 }"))
SELECT * WHERE {
{
SELECT ?n1 ?n2 WHERE { ?n1 ?p ?n2 }
}
}
ORDER BY ?n2 ?n1
LIMIT 2
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyoxigraph import NamedNode

from middleware.kg.terms import Term


@dataclass(frozen=True)
class Ordering:
    """``ORDER BY`` the ``keys`` (variable names), then ``LIMIT limit``."""

    keys: tuple[str, ...]
    limit: int

    def sorted(self, rows: list[dict[str, Term]]) -> list[dict[str, Term]] | None:
        """``rows`` ordered and cut as the engine would; None when a key is not an IRI."""
        values = []
        for row in rows:
            key = tuple(row.get(name) for name in self.keys)
            if not all(isinstance(term, NamedNode) for term in key):
                return None
            values.append((tuple(term.value for term in key), row))  # type: ignore[union-attr]
        values.sort(key=lambda pair: pair[0])
        return [row for _, row in values[: self.limit]]

    def query(self, text: str) -> str:
        """A rendered template as a subquery, ordered and cut in the engine."""
        keys = " ".join(f"?{name}" for name in self.keys)
        return f"SELECT * WHERE {{\n{{\n{text}\n}}\n}}\nORDER BY {keys}\nLIMIT {self.limit}"

    def rows(
        self, text: str, run: Callable[[str], list[dict[str, Term]]], *, in_process: bool
    ) -> list[dict[str, Term]]:
        """The rows of the rendered template ``text`` (``run`` runs a query), ordered and
        cut: here when the engine is in this process and every key is an IRI, else by
        the engine."""
        if in_process:
            rows = self.sorted(run(text))
            if rows is not None:
                return rows
        return run(self.query(text))

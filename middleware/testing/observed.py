"""A local store whose queries a test can watch or hold up, by overriding two hooks;
``QueryLog``, one that keeps the text of every query it runs."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import NamedNode

from middleware.kg.backends.local import LocalStore
from middleware.kg.base import QueryResult
from middleware.kg.sparql_guard import QueryDataset


class ObservedStore(LocalStore):
    """Calls ``before(sparql)`` ahead of each query the store runs and ``after(sparql,
    result)`` once it has run; both do nothing here."""

    def before(self, sparql: str) -> None:
        """Called with each query's text before it runs."""

    def after(self, sparql: str, result: QueryResult) -> None:
        """Called with each query's text and result after it ran."""

    def _execute(
        self,
        sparql: str,
        timeout: float,
        max_rows: int | None = None,
        dataset: QueryDataset | None = None,
    ) -> QueryResult:
        self.before(sparql)
        result = super()._execute(sparql, timeout, max_rows, dataset)
        self.after(sparql, result)
        return result


class QueryLog(ObservedStore):
    """A local store that keeps the text of every query it runs in ``texts``."""

    texts: list[str]

    @classmethod
    def loaded(cls, folder: Path, lines: list[str], *, name: str) -> QueryLog:
        """A store at ``folder`` holding MetaQA-style ``subject|relation|object`` lines."""
        store = cls(folder, profile="metaqa", name=name)
        store.texts = []
        store.load_text("\n".join(lines) + "\n", name="kb.txt")
        return store

    def before(self, sparql: str) -> None:
        self.texts.append(sparql)

    def named(self, label: str) -> NamedNode:
        """The IRI of the entity whose label is ``label`` exactly."""
        return next(e.iri for e in self.search(label) if e.label == label)

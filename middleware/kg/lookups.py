"""Label lookups for linking, over the templates: exact literals and a folded pattern.

``lookup_labels`` finds entities whose label or alias is exactly one of the given
texts (an index join on every engine, so it works on Wikidata too);
``match_labels`` scans labels with an anchored, case-insensitive regular expression
that linking builds from folded mentions (fine on graphs of millions of labels, too
slow for Wikidata, whose profile searches instead). ``label_rows`` lists every label
for an in-process index and exists only where ``capabilities.label_index`` says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pyoxigraph import Literal, NamedNode

from middleware.errors import BadRequest
from middleware.kg.base import MAX_LIMIT, Capabilities, LabelRow
from middleware.kg.profiles import Profile
from middleware.kg.sparql_templates import TemplateSet
from middleware.kg.terms import Term

NOTHING = NamedNode("urn:kgmw:none")  # binds an empty predicate list to a pattern
LOOKUP_BATCH = 200
MAX_PATTERN_CHARS = 100_000


class LabelLookups:
    """The label operations of a graph (mixed into ``GraphOperations``)."""

    name: str
    profile: Profile
    capabilities: Capabilities

    def __init__(self) -> None:
        self.templates = TemplateSet(overrides=self.profile.templates, dialect=self.profile.dialect)

    def _select(self, template: str, /, **bindings: object) -> list[dict[str, Term]]:
        raise NotImplementedError  # the transport, from GraphOperations

    def _label_bindings(self) -> dict[str, object]:
        return {
            "labels": list(self.profile.label_predicates),
            "aliases": list(self.profile.alias_predicates) or [NOTHING],
        }

    def _label_rows(self, rows: list[dict[str, Term]]) -> list[LabelRow]:
        found = []
        for row in rows:
            entity, label, alias = row.get("e"), row.get("label"), row.get("alias")
            if isinstance(entity, NamedNode) and isinstance(label, Literal):
                is_alias = isinstance(alias, Literal) and alias.value in ("true", "1")
                found.append(LabelRow(entity, label.value, is_alias, label.language))
        return found

    def lookup_labels(self, texts: Sequence[str], *, limit: int = 1000) -> list[LabelRow]:
        """Labels and aliases equal to one of ``texts`` (plain, or in the profile language)."""
        unique = list(dict.fromkeys(t for t in texts if t))
        found: list[LabelRow] = []
        for start in range(0, len(unique), LOOKUP_BATCH):
            literals = []
            for text in unique[start : start + LOOKUP_BATCH]:
                literals.append(Literal(text))
                if self.profile.language:
                    literals.append(Literal(text, language=self.profile.language))
            rows = self._select(
                "label_lookup",
                literals=literals,
                limit=min(limit, MAX_LIMIT),
                **self._label_bindings(),
            )
            found += self._label_rows(rows)
        return found

    def match_labels(self, pattern: str, *, limit: int = 1000) -> list[LabelRow]:
        """Labels and aliases matching ``pattern`` (an XPath regular expression, any case)."""
        if not pattern or len(pattern) > MAX_PATTERN_CHARS:
            raise BadRequest(f"a label pattern must have 1 to {MAX_PATTERN_CHARS} characters")
        rows = self._select(
            "label_scan",
            pattern=Literal(pattern),
            limit=min(limit, MAX_LIMIT),
            **self._label_bindings(),
        )
        return self._label_rows(rows)

    def label_rows(self) -> Iterator[LabelRow]:
        """Every label and alias, for an in-process index (``capabilities.label_index``)."""
        raise BadRequest(
            f"graph {self.name!r} cannot list its labels in-process",
            hint="use lookup_labels or match_labels; capabilities.label_index is False here",
        )

"""Wikidata statements with their ranks and qualifiers, for facts that change over time.

Truthy ``wdt:`` triples (what neighbours and paths follow) keep only the best-ranked
values and drop qualifiers: the United States' ``wdt:P6`` names only the current head of
government. The statements (``p:``/``ps:``/``pq:``) hold every value with its rank and
qualifiers, so "who was head of government in 2012" can be answered from
:func:`statements` and its verbalization::

    United States of America | head of government | Barack Obama (start time 2009-01-20,
    end time 2017-01-20)

The template (``sparql/wikidata/statements.rq``) labels through the query service's
``wikibase:label`` service; a local copy without it needs another template.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyoxigraph import Literal, NamedNode

from middleware.errors import BadRequest
from middleware.kg.operations import GraphOperations
from middleware.kg.terms import Term, to_iri

TEMPLATE = "wikidata/statements"
ENTITY = "http://www.wikidata.org/entity/"
RANKS = {
    "http://wikiba.se/ontology#PreferredRank": "preferred",
    "http://wikiba.se/ontology#NormalRank": "normal",
    "http://wikiba.se/ontology#DeprecatedRank": "deprecated",
}


@dataclass(frozen=True)
class Qualifier:
    """One qualifier of a statement: its property (``wd:P580``), value and their labels."""

    property: NamedNode
    label: str
    value: Term
    value_label: str


@dataclass(frozen=True)
class Statement:
    """One statement node (``wds:``) of ``subject`` for ``property`` (``wd:P39``)."""

    subject: NamedNode
    property: NamedNode
    property_label: str
    node: NamedNode
    value: Term
    value_label: str
    rank: str  # preferred, normal or deprecated
    qualifiers: tuple[Qualifier, ...] = ()

    def text(self, subject_label: str) -> str:
        """``subject | property | value (qualifier value, ...)``, deprecated ones marked."""
        notes = [f"{q.label} {q.value_label}" for q in self.qualifiers]
        if self.rank == "deprecated":
            notes.insert(0, "deprecated")
        tail = f" ({', '.join(notes)})" if notes else ""
        return f"{subject_label} | {self.property_label} | {self.value_label}{tail}"


def _shown(term: Term, label: Term | None) -> str:
    """A value as text: its label, a date without a midnight time, or the literal."""
    if isinstance(term, Literal):
        text = term.value
        return text[:-10] if text.endswith("T00:00:00Z") else text
    return label.value if label is not None else term.value.rsplit("/", 1)[-1]


def statements(
    graph: GraphOperations, entity: str | NamedNode, prop: str | NamedNode, *, limit: int = 500
) -> list[Statement]:
    """Every statement of ``entity`` for property ``prop`` (``wd:P39`` or ``P39``), with rank
    and qualifiers, in statement order."""
    node = to_iri(entity)
    name = prop.value if isinstance(prop, NamedNode) else prop.strip()
    if not name.startswith(("http://", "https://")):
        if not (name[:1] == "P" and name[1:].isdigit()):
            raise BadRequest(f"a Wikidata property is P and a number, got {name!r}")
        name = ENTITY + name
    prop_iri = to_iri(name)
    language = graph.profile.language or "en"
    languages = Literal(",".join(dict.fromkeys([language, "en"])))
    rows = graph.run_template(
        TEMPLATE, entity=node, property=prop_iri, languages=languages, limit=limit
    )
    found: dict[NamedNode, Statement] = {}
    for row in rows:
        statement = row["statement"]
        if not isinstance(statement, NamedNode):
            continue
        if statement not in found:
            found[statement] = Statement(
                node,
                prop_iri,
                _shown(prop_iri, row.get("propertyLabel")),
                statement,
                row["value"],
                _shown(row["value"], row.get("valueLabel")),
                RANKS.get(row["rank"].value, "normal"),
            )
        qualifier, value = row.get("qualifier"), row.get("qualifierValue")
        if isinstance(qualifier, NamedNode) and value is not None:
            current = found[statement]
            extra = Qualifier(
                qualifier,
                _shown(qualifier, row.get("qualifierLabel")),
                value,
                _shown(value, row.get("qualifierValueLabel")),
            )
            found[statement] = replace(current, qualifiers=(*current.qualifiers, extra))
    return list(found.values())

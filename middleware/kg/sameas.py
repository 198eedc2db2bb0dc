"""Entities of two sources that are the same thing, through a link property.

A profile's ``same_as`` names the property by which this source's entities point to
another source's, and how its value maps to that source's IRI (Wikidata's P646 holds a
Freebase ID, ``/m/0abc``, which is ``http://rdf.freebase.com/ns/m.0abc``). One ``{id}``
placeholder in each pattern carries the shared part, so the map reads both ways.

>>> rule = SameAsRule(NamedNode("http://www.wikidata.org/prop/direct/P646"), "/m/{id}",
...                   "http://rdf.freebase.com/ns/m.{id}")
>>> rule.to_iri("/m/0abc"), rule.to_value("http://rdf.freebase.com/ns/m.0abc")
('http://rdf.freebase.com/ns/m.0abc', '/m/0abc')
>>> rule.to_iri("Q42") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pyoxigraph import Literal, NamedNode

from middleware.errors import ConfigError
from middleware.kg.terms import Term

ID = "{id}"


class TemplateGraph(Protocol):
    """A graph that runs the project's SPARQL templates (``capabilities.templates``)."""

    name: str

    def run_template(self, template: str, **bindings: object) -> list[dict[str, Term]]: ...


@dataclass(frozen=True)
class SameAsRule:
    """``entity <property> "value"`` says the entity is the other source's ``iri``."""

    property: NamedNode
    value: str  # the literal's shape, with {id}
    iri: str  # the other source's IRI, with {id}

    def _match(self, pattern: str, text: str) -> str | None:
        head, _, tail = pattern.partition(ID)
        found = re.fullmatch(re.escape(head) + "(.+?)" + re.escape(tail), text)
        return found.group(1) if found else None

    def to_iri(self, value: str) -> str | None:
        """The other source's IRI for a link value (None when it has another shape)."""
        shared = self._match(self.value, value)
        return None if shared is None else self.iri.replace(ID, shared)

    def to_value(self, iri: str) -> str | None:
        """The link value naming the other source's ``iri`` (None for another shape)."""
        shared = self._match(self.iri, iri)
        return None if shared is None else self.value.replace(ID, shared)


def parse_rule(data: Mapping[str, Any], prefixes: Mapping[str, str], where: str) -> SameAsRule:
    """A profile's ``same_as`` mapping: ``property``, ``value`` and ``iri``."""
    try:
        prop, value, iri = str(data["property"]), str(data["value"]), str(data["iri"])
    except (KeyError, TypeError) as err:
        raise ConfigError(
            f"{where}: same_as needs property, value and iri (missing {err})"
        ) from err
    head, sep, tail = prop.partition(":")
    if sep and head in prefixes:
        prop = prefixes[head] + tail
    if value.count(ID) != 1 or iri.count(ID) != 1:
        raise ConfigError(f"{where}: same_as value and iri each need one {ID} placeholder")
    try:
        return SameAsRule(NamedNode(prop), value, iri)
    except ValueError as err:
        raise ConfigError(f"{where}: same_as property {prop!r} is not an IRI ({err})") from err


def outward(
    graph: TemplateGraph, rule: SameAsRule, entities: Sequence[NamedNode]
) -> dict[NamedNode, NamedNode]:
    """This source's ``entities`` → the other source's IRIs they link to."""
    if not entities:
        return {}
    rows = graph.run_template(
        "same_as_out", entities=list(entities), property=rule.property, limit=10 * len(entities)
    )
    found: dict[NamedNode, NamedNode] = {}
    for row in rows:
        entity, value = row.get("e"), row.get("v")
        if isinstance(entity, NamedNode) and isinstance(value, Literal):
            iri = rule.to_iri(value.value)
            if iri is not None:
                found.setdefault(entity, NamedNode(iri))
    return found


def inward(
    graph: TemplateGraph, rule: SameAsRule, iris: Sequence[NamedNode]
) -> dict[NamedNode, NamedNode]:
    """The other source's ``iris`` → this source's entities that link to them."""
    values = {v: iri for iri in iris if (v := rule.to_value(iri.value)) is not None}
    if not values:
        return {}
    rows = graph.run_template(
        "same_as_in",
        values=[Literal(v) for v in values],
        property=rule.property,
        limit=10 * len(values),
    )
    found: dict[NamedNode, NamedNode] = {}
    for row in rows:
        entity, value = row.get("e"), row.get("v")
        if isinstance(entity, NamedNode) and isinstance(value, Literal) and value.value in values:
            found.setdefault(values[value.value], entity)
    return found

"""An entity's label, aliases and description, read from the rows of ``describe.rq``."""

from __future__ import annotations

from collections.abc import Callable

from pyoxigraph import Literal, NamedNode

from middleware.kg.base import Entity
from middleware.kg.terms import Term


def entity_of(
    node: NamedNode,
    rows: list[dict[str, Term]],
    source: str,
    rank: Callable[[Literal], int],
) -> Entity:
    """``node`` as an Entity of graph ``source``: its best label and description by
    ``rank`` (the profile's language first), every alias once."""
    labels: list[Literal] = []
    aliases: list[str] = []
    descriptions: list[Literal] = []
    for row in rows:
        kind, value = row.get("kind"), row.get("value")
        if not isinstance(value, Literal) or kind is None:
            continue
        if kind.value == "label":
            labels.append(value)
        elif kind.value == "alias":
            aliases.append(value.value)
        elif kind.value == "description":
            descriptions.append(value)
    pick = sorted(labels, key=lambda lit: (rank(lit), lit.value))
    desc = sorted(descriptions, key=lambda lit: (rank(lit), lit.value))
    return Entity(
        node,
        pick[0].value if pick else None,
        source,
        aliases=tuple(dict.fromkeys(aliases)),
        description=desc[0].value if desc else None,
    )

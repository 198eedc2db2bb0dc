"""Relation metadata from the OWL ontologies in ``ontologies/`` (read with owlready2).

For each relation IRI: a readable label, an inverse label for hops walked against
the edge (where the ontology gives one), a noun for what its object is to its
subject (``kgmw:nounLabel``: a film's *director*), and whether it is symmetric or
transitive.
Relations the ontology does not cover get a label made from their IRI (``directed_by``
→ ``directed by``).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import owlready2

from middleware.errors import ConfigError

KGMW_NS = "https://kgmw.dev/ns#"


@dataclass(frozen=True)
class RelationInfo:
    iri: str
    label: str
    inverse_label: str | None = None
    inverse_of: str | None = None
    symmetric: bool = False
    transitive: bool = False
    noun: str | None = None  # the object named as a noun: Heat's "director"

    @property
    def reads_backwards(self) -> bool:
        """Whether a hop walked against the edge has a reading of its own: an inverse
        label, or the relation is symmetric. A path reads a hop without one as the
        stored triple, turned around (``Verbalizer.path``).

        >>> RelationInfo("x", "directed by", "directed").reads_backwards
        True
        >>> RelationInfo("x", "made by").reads_backwards
        False
        """
        return self.symmetric or self.inverse_label is not None

    def reading(self, forward: bool) -> str:
        """The relation's name as read from the entity a hop starts at, where no triple
        is written out (a walk's options ``tail (relation)``, a neighbours table).

        >>> RelationInfo("x", "directed by", "directed").reading(False)
        'directed'
        >>> RelationInfo("x", "part of").reading(False)
        'part of (reversed)'
        """
        if forward or self.symmetric:
            return self.label
        return self.inverse_label or f"{self.label} (reversed)"


def humanize(iri: str) -> str:
    """A readable name from an IRI's last segment.

    >>> humanize("https://kgmw.dev/metaqa/relation/directed_by")
    'directed by'
    >>> humanize("http://dbpedia.org/ontology/birthPlace")
    'birth place'
    >>> humanize("http://rdf.freebase.com/ns/people.person.place_of_birth")
    'place of birth'
    """
    tail = re.split(r"[/#]", iri.rstrip("/#"))[-1]
    if "." in tail:
        tail = tail.split(".")[-1] or tail
    tail = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", tail)
    return re.sub(r"[_\-]+", " ", tail).strip().lower() or iri


class RelationCatalog:
    """Readable relation names; built from an ontology file or empty."""

    def __init__(self, relations: dict[str, RelationInfo] | None = None) -> None:
        self._relations = dict(relations or {})

    def __len__(self) -> int:
        return len(self._relations)

    def __contains__(self, iri: str) -> bool:
        return iri in self._relations

    def iris(self) -> list[str]:
        """The IRIs of the relations the catalogue describes."""
        return list(self._relations)

    def get(self, iri: str) -> RelationInfo:
        found = self._relations.get(iri)
        return found if found is not None else RelationInfo(iri, humanize(iri))


_OWL_LOCK = threading.Lock()


@cache
def load_relations(path: Path | None) -> RelationCatalog:
    """Read an OWL file (RDF/XML or N-Triples) into a catalog; ``None`` gives an empty one."""
    if path is None:
        return RelationCatalog()
    with _OWL_LOCK:
        world = owlready2.World()
        try:
            onto = world.get_ontology(path.resolve().as_uri()).load()
        except Exception as err:  # owlready2 raises bare Exceptions for parse errors
            raise ConfigError(f"{path}: cannot read relation ontology: {err}") from err
        inverse_prop = world[KGMW_NS + "inverseLabel"]
        noun_prop = world[KGMW_NS + "nounLabel"]
        relations: dict[str, RelationInfo] = {}
        for prop in onto.properties():
            if isinstance(prop, owlready2.AnnotationPropertyClass):
                continue
            labels = [str(x) for x in prop.label]
            inverses = [str(x) for x in inverse_prop[prop]] if inverse_prop is not None else []
            nouns = [str(x) for x in noun_prop[prop]] if noun_prop is not None else []
            inverse = (
                prop.inverse_property if isinstance(prop, owlready2.ObjectPropertyClass) else None
            )
            relations[prop.iri] = RelationInfo(
                iri=prop.iri,
                label=labels[0] if labels else humanize(prop.iri),
                inverse_label=inverses[0] if inverses else None,
                inverse_of=inverse.iri if inverse is not None else None,
                symmetric=owlready2.SymmetricProperty in prop.is_a,
                transitive=owlready2.TransitiveProperty in prop.is_a,
                noun=nouns[0] if nouns else None,
            )
        world.close()
    return RelationCatalog(relations)

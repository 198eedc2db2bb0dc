"""Triples and paths as short atomic text, schema-agnostic.

Relation names come from the profile's relation ontology, else from labels in the
graph, else from the IRI; entity names from the graph's labels, else the IRI's last
segment. A hop walked against the edge reads with the relation's inverse label:

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Titanic|directed_by|James Cameron\\nAvatar|directed_by|James Cameron\\n", name="kb.txt")
>>> path = kg.paths(kg.entity_iri("Titanic"), kg.entity_iri("Avatar"))[0]
>>> Verbalizer(kg).path(path)
'Titanic | directed by | James Cameron | directed | Avatar'
>>> Verbalizer(kg).path(path, style="arrows")
'Titanic —directed by→ James Cameron —directed→ Avatar'

A relation without an inverse label (and not symmetric) reads as the stored triple,
turned around, never as "made by (reversed)":

>>> shop = LocalStore()
>>> _ = shop.load_text("<http://ex.org/Widget> <http://ex.org/madeBy> <http://ex.org/Acme> .", name="s.nt")
>>> path = shop.paths("http://ex.org/Acme", "http://ex.org/Widget")[0]
>>> Verbalizer(shop).path(path, style="arrows")
'Widget —made by→ Acme'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import groupby
from typing import Literal as TypingLiteral
from urllib.parse import unquote

from pyoxigraph import BlankNode, Literal, NamedNode

from middleware.kg.base import Hop, KnowledgeGraph, Path, Triple
from middleware.kg.relations import RelationCatalog, RelationInfo, load_relations
from middleware.kg.terms import Term

XSD = "http://www.w3.org/2001/XMLSchema#"
_SPACE = re.compile(r"\s+")


def local_name(iri: str) -> str:
    """The readable tail of an IRI.

    >>> local_name("https://kgmw.dev/metaqa/entity/James%20Cameron")
    'James Cameron'
    >>> local_name("http://www.wikidata.org/entity/Q42")
    'Q42'
    """
    tail = re.split(r"[/#]", iri.rstrip("/#"))[-1] or iri
    return unquote(tail).replace("_", " ") if "%" in tail or "_" in tail else tail


class Verbalizer:
    """Turns graph structures into text, fetching labels from ``graph`` in batches."""

    def __init__(
        self,
        graph: KnowledgeGraph | None = None,
        *,
        relations: RelationCatalog | None = None,
        literal_max_chars: int = 80,
    ) -> None:
        self.graph = graph
        if relations is None:
            relations = (
                load_relations(graph.profile.relations) if graph is not None else RelationCatalog()
            )
        self.relations = relations
        self.literal_max_chars = literal_max_chars
        self._labels: dict[Term, str] = {}
        self._infos: dict[str, RelationInfo] = {}  # a relation's reading, made once
        self._skipped = set(graph.profile.skipped_predicates) if graph is not None else set()

    # -- labels -----------------------------------------------------------------------
    def prepare(self, terms: Iterable[Term]) -> None:
        """Fetch labels of many terms in one go (IRIs only; literals need none)."""
        missing = [
            t for t in dict.fromkeys(terms) if isinstance(t, NamedNode) and t not in self._labels
        ]
        if missing and self.graph is not None:
            found = self.graph.labels(missing)
            for term in missing:
                self._labels[term] = _clean(found.get(term) or local_name(term.value))
        else:
            for term in missing:
                self._labels[term] = _clean(local_name(term.value))

    def name(self, term: Term) -> str:
        """How an entity or literal is written."""
        if isinstance(term, Literal):
            return self.literal(term)
        if isinstance(term, BlankNode):
            return f"_:{term.value}"
        if term not in self._labels:
            self.prepare([term])
        return self._labels[term]

    def literal(self, term: Literal) -> str:
        """A literal's value; numbers and dates as written, long text cut.

        >>> Verbalizer().literal(Literal("1997-12-19", datatype=NamedNode(XSD + "date")))
        '1997-12-19'
        >>> Verbalizer(literal_max_chars=10).literal(Literal("a very long description", language="en"))
        'a very lo…'
        """
        text = _clean(term.value)
        datatype = term.datatype.value if term.datatype is not None else ""
        if datatype == XSD + "dateTime" and text.endswith("T00:00:00Z"):
            text = text[: -len("T00:00:00Z")]
        if len(text) > self.literal_max_chars:
            text = text[: self.literal_max_chars - 1].rstrip() + "…"
        return text

    def relation(self, predicate: NamedNode, *, forward: bool = True) -> str:
        """The relation's name as read from where a hop starts (``RelationInfo.reading``)."""
        return self._info(predicate).reading(forward)

    def relation_noun(self, predicate: NamedNode) -> str | None:
        """What the relation's object is to its subject, as a noun ("director"); None
        where the profile names none (``RelationInfo.noun``)."""
        return self._info(predicate).noun

    def _info(self, predicate: NamedNode) -> RelationInfo:
        info = self._infos.get(predicate.value)
        if info is None:  # set once: the catalogue is fixed and a label, once read, stays
            info = self._infos[predicate.value] = self._read_info(predicate)
        return info

    def _read_info(self, predicate: NamedNode) -> RelationInfo:
        info = self.relations.get(predicate.value)
        if predicate.value not in self.relations and self.graph is not None:
            if predicate not in self._labels:
                self.prepare([predicate])
            graph_label = self._labels[predicate]
            if graph_label != local_name(predicate.value):
                info = RelationInfo(predicate.value, graph_label)
        return info

    def turned(self, hop: Hop) -> bool:
        """True for a hop walked against its edge over a relation with no reading that
        way (``RelationInfo.reads_backwards``): it is written as its stored triple."""
        return not hop.forward and not self._info(hop.triple.predicate).reads_backwards

    # -- structures ---------------------------------------------------------------------
    def keep(self, triple: Triple) -> bool:
        """False for metadata predicates (labels, ignored ones) that carry no relation."""
        return triple.predicate not in self._skipped

    def parts(self, triple: Triple) -> tuple[str, str, str]:
        """The subject's name, the relation's reading and the object's name."""
        return (
            self.name(triple.subject),
            self.relation(triple.predicate),
            self.name(triple.object),
        )

    def triple(self, triple: Triple) -> str:
        """``subject | relation | object``."""
        return " | ".join(self.parts(triple))

    def hop(self, hop: Hop) -> str:
        """A triple as walked: a reversed hop starts at the object and reads with the
        inverse label, or, without one, reads as the stored triple."""
        return self.path(Path((hop,)))

    def triples(self, triples: Iterable[Triple]) -> list[str]:
        kept = [t for t in triples if self.keep(t)]
        self.prepare(term for t in kept for term in (t.subject, t.predicate, t.object))
        return [self.triple(t) for t in kept]

    def path(self, path: Path, *, style: TypingLiteral["pipes", "arrows"] = "pipes") -> str:
        """A whole path, each hop in the direction it was walked, except where a hop
        cannot read that way (``turned``): a run of such hops is written as its stored
        triples, from the far end back, in a clause of its own after ``"; "``.

        ``A | r | B; C | s | B``: A r B, and C s B, walked A → B → C.
        """
        if not path.hops:
            return ""
        self.prepare([*path.nodes, *(h.triple.predicate for h in path.hops)])
        clauses = []
        for turned, run in groupby(path.hops, key=self.turned):
            hops = [Hop(h.triple) for h in reversed(list(run))] if turned else list(run)
            parts = [self.name(hops[0].start)]
            for hop in hops:
                relation = self.relation(hop.triple.predicate, forward=hop.forward)
                if style == "arrows":
                    parts.append(f" —{relation}→ {self.name(hop.end)}")
                else:
                    parts.append(f" | {relation} | {self.name(hop.end)}")
            clauses.append("".join(parts))
        return "; ".join(clauses)


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()

"""The shared collect and rank stages: link names, gather neighbourhoods, match by meaning.

Used by the pseudo-graph method and QSM (and any method that matches text against
verbalized triples).

Names (from a pseudo-graph or the question) are linked to a source's entities; the
1-hop neighbourhoods of those entities, both directions and bounded, form the *base
graph*; base triples and query texts are verbalized and embedded, and each query keeps
its most similar base triples by cosine.

>>> from middleware.text.embeddings import HashEncoder
>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa", name="films")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|release_year|1995\\n", name="kb.txt")
>>> from middleware.text.linking import EntityLinker
>>> linked, unlinked = link_names(EntityLinker(kg), ["Heat", "Nowhere"], per_name=2)
>>> [(n.name, n.entity.label) for n in linked], unlinked
([('Heat', 'Heat')], ['Nowhere'])
>>> base = neighbourhood(kg, [linked[0].entity.iri], per_entity=10)
>>> [b.text for b in base]
['Heat | directed by | Michael Mann', 'Heat | released in | 1995']
>>> vectors = HashEncoder().encode([b.text for b in base])
>>> [base[i].text for i, _ in top_matches(HashEncoder().encode(["Heat | director | Michael Mann"]), vectors, k=1)[0]]
['Heat | directed by | Michael Mann']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pyoxigraph import NamedNode

from middleware.kg.base import Entity, KnowledgeGraph, Triple
from middleware.kg.capped import cut_note, neighbors_capped
from middleware.methods.answer import Step
from middleware.methods.run import Run
from middleware.text.embeddings.encoders import Vectors
from middleware.text.embeddings.index import DEFAULT_FAISS_THRESHOLD, VectorIndex
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

LINK_MATCHES = ("exact", "alias", "folded", "folded-alias", "fuzzy")


@dataclass(frozen=True)
class LinkedName:
    """A name linked to one of the source's entities."""

    name: str
    entity: Entity
    origin: str  # "pseudo-graph" or "question"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "origin": self.origin,
            "iri": self.entity.iri.value,
            "label": self.entity.label,
            "match": self.entity.match,
            "source": self.entity.source,
        }


@dataclass(frozen=True)
class BaseTriple:
    """A triple of the base graph with its verbalization, whole and in its three parts
    (so a fact the LLM copies back can be matched without re-parsing text)."""

    triple: Triple
    parts: tuple[str, str, str]

    @property
    def text(self) -> str:
        return " | ".join(self.parts)


def link_names(
    linker: EntityLinker,
    names: Iterable[str],
    *,
    per_name: int,
    origin: str = "pseudo-graph",
) -> tuple[list[LinkedName], list[str]]:
    """Up to ``per_name`` entities per name (several entities may share a label; the
    pruning picks among them); and the names that linked to nothing."""
    linked: dict[NamedNode, LinkedName] = {}
    unlinked: list[str] = []
    for name in dict.fromkeys(n.strip() for n in names if n and n.strip()):
        found = [e for e in linker.link(name, limit=per_name) if e.match in LINK_MATCHES]
        if not found:
            unlinked.append(name)
        for entity in found:
            linked.setdefault(entity.iri, LinkedName(name, entity, origin))
    return list(linked.values()), unlinked


def link_question(linker: EntityLinker, question: str) -> list[LinkedName]:
    """Entities named by spans of the question itself."""
    found: dict[NamedNode, LinkedName] = {}
    for span, entity in linker.spans(question):
        found.setdefault(entity.iri, LinkedName(span, entity, "question"))
    return list(found.values())


def ask_names(run: Run, names: Iterable[LinkedName], source: str, step: Step | None) -> None:
    """Record the names linked from the question's own words as the question's entities."""
    for name in names:
        if name.origin == "question":
            run.ask(
                name.entity.iri.value,
                span=name.name,
                match=name.entity.match or "",
                label=name.entity.label,
                source=source,
                step=step,
            )


def neighbourhood(
    graph: KnowledgeGraph,
    entities: Sequence[NamedNode],
    *,
    per_entity: int,
    verbalizer: Verbalizer | None = None,
    cuts: list[str] | None = None,
    setting: str = "neighbors_per_entity",
    spread: bool = False,
) -> list[BaseTriple]:
    """The 1-hop neighbourhoods (in and out, ``per_entity`` triples each) as base triples;
    label and ignored predicates left out, repeats dropped, graph order kept; with
    ``spread``, a hub's spread over its relations (``kg/spread.py``). A note per
    entity whose neighbourhood passed ``per_entity`` (the ``setting`` named) goes to ``cuts``."""
    verbalizer = verbalizer or Verbalizer(graph)
    seen: dict[tuple[str, str, str], Triple] = {}
    for iri in entities:
        read = neighbors_capped(graph, iri, per_entity, spread=spread)
        if read.cut and cuts is not None:
            name = verbalizer.name(iri)
            cuts.append(
                cut_note(
                    "triples", name, per_entity, setting, spread=read.spread, read=len(read.items)
                )
            )
        for triple in read.items:
            if verbalizer.keep(triple):
                seen.setdefault(triple.key(), triple)
    triples = list(seen.values())
    verbalizer.prepare(term for t in triples for term in (t.subject, t.predicate, t.object))
    return [BaseTriple(t, verbalizer.parts(t)) for t in triples]


def top_matches(
    queries: Vectors, base: Vectors, *, k: int, faiss_threshold: int = DEFAULT_FAISS_THRESHOLD
) -> list[list[tuple[int, float]]]:
    """For each query vector, the ``k`` most similar base vectors as (index, cosine)."""
    if len(base) == 0 or len(queries) == 0:
        return [[] for _ in range(len(queries))]
    index: VectorIndex[int] = VectorIndex(dim=base.shape[1], faiss_threshold=faiss_threshold)
    index.add(base, list(range(len(base))))
    return [[(hit.item, hit.score) for hit in hits] for hits in index.search(queries, k=k)]

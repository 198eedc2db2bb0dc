"""A dataset's topic-entity keys as graph IRIs, through the source profile."""

from __future__ import annotations

from middleware.eval.items import EvalItem
from middleware.kg.base import KnowledgeGraph
from middleware.kg.profiles import Profile
from middleware.kg.terms import looks_like_iri, to_iri


def topic_iris(item: EvalItem, profile: Profile | None) -> list[str]:
    """IRIs for the item's topic entities: IRIs as given, dataset keys mapped by the
    profile's delimited mapping (MetaQA names, Freebase ``m.0abc`` ids).

    >>> from middleware.kg.profiles import load_profile
    >>> topic_iris(EvalItem("1", "q", topic_entities=("m.03_r3",)), load_profile("freebase"))
    ['http://rdf.freebase.com/ns/m.03_r3']
    >>> topic_iris(EvalItem("2", "q", topic_entities=("Ginger Rogers",)), load_profile("metaqa"))
    ['https://kgmw.dev/metaqa/entity/Ginger%20Rogers']
    """
    iris = []
    for key in item.topic_entities:
        if looks_like_iri(key):
            iris.append(key)
        elif profile is not None and profile.delimited is not None:
            iris.append(profile.delimited.entity(key))
    return iris


def in_graph(item: EvalItem, graph: KnowledgeGraph) -> bool:
    """Whether one of the item's topic entities has at least one relation in ``graph``."""
    return any(has_edge(graph, iri) for iri in topic_iris(item, graph.profile))


def has_edge(graph: KnowledgeGraph, iri: str) -> bool:
    """Whether ``iri`` has a relation triple: one row of ``sparql/has_edge.rq`` where the
    graph runs the project's templates (a hub costs what any entity does), else its degree."""
    if not graph.capabilities.templates:
        return graph.degree(iri) > 0
    skipped = list(graph.profile.skipped_predicates)
    rows = graph.run_template("has_edge", entity=to_iri(iri), skipped=skipped)  # type: ignore[attr-defined]
    return bool(rows)


def answer_iris(item: EvalItem, graph: KnowledgeGraph) -> list[str]:
    """IRIs for the item's gold answers: IRIs as given, names mapped by the profile's
    delimited mapping where names are keys (MetaQA), otherwise the entities labelled
    exactly so.

    >>> from middleware.kg.backends.local import LocalStore
    >>> kg = LocalStore(profile="metaqa")
    >>> answer_iris(EvalItem("1", "q", answers=("Heat",)), kg)
    ['https://kgmw.dev/metaqa/entity/Heat']
    """
    iris: list[str] = []
    names = []
    for answer in item.answers:
        if not answer.strip():  # a blank answer names nothing (the WebQuestions file has some)
            continue
        if looks_like_iri(answer):
            iris.append(answer)
        elif graph.profile.delimited is not None and graph.profile.delimited.label_entities:
            iris.append(graph.profile.delimited.entity(answer))  # names are the keys
        else:
            names.append(answer)
    if names:
        iris += [row.entity.value for row in graph.lookup_labels(names)]
    return list(dict.fromkeys(iris))

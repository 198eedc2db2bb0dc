"""RoK's path machinery, free of any LLM: pair search, ranking, neighbour pruning.

``search_pairs`` follows the paper's Algorithm 1: start from the first key entity,
search paths to every key entity not yet used as a start, then continue from the
entities those paths reached; each unordered pair is searched once. ``rank_paths``
buckets paths by how many key entities they hold and orders each bucket by the mean
PageRank of its nodes; ``neighbour_candidates`` gathers the 1-hop triples around
main-path entities, dropping those whose relation the main path already uses there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pyoxigraph import NamedNode

from middleware.kg.base import KnowledgeGraph, Path, Triple
from middleware.kg.capped import neighbors_capped, paths_capped
from middleware.kg.operations import GraphOperations
from middleware.kg.terms import Term, term_key, to_iri

Side = Literal["out", "in"]

# what RoK reads when its per-call knobs are left at None: the graph's own default limits
DEFAULT_PATHS = GraphOperations.paths_limit
DEFAULT_NEIGHBORS = GraphOperations.neighbors_limit


def canonical_key(path: Path) -> tuple[object, ...]:
    """The same key for a path and its reverse, so A…B and B…A count once."""
    forward = path.key()
    backward = tuple((triple, not fwd) for triple, fwd in reversed(forward))
    return min(forward, backward)


@dataclass
class PairSearch:
    """What the main-path search did: pairs in the order searched, paths found."""

    pairs: list[tuple[NamedNode, NamedNode]] = field(default_factory=list)
    found: dict[tuple[NamedNode, NamedNode], int] = field(default_factory=dict)
    paths: list[Path] = field(default_factory=list)
    cut: list[tuple[NamedNode, NamedNode]] = field(default_factory=list)  # more than ``limit``


def search_pairs(
    graph: KnowledgeGraph,
    keys: Sequence[NamedNode],
    *,
    max_hops: int,
    limit: int = DEFAULT_PATHS,
) -> PairSearch:
    """All paths of at most ``max_hops`` between pairs of key entities (Algorithm 1), at
    most ``limit`` per pair; the pairs that had more are in ``cut``."""
    result = PairSearch()
    remaining = list(dict.fromkeys(keys))
    queue: list[NamedNode] = remaining[:1]
    seen: set[tuple[object, ...]] = set()
    while remaining:
        if not queue:  # nothing reached is left to start from: take the next key entity
            queue.append(remaining[0])
        start = queue.pop(0)
        if start not in remaining:
            continue
        remaining.remove(start)
        for other in remaining:
            read = paths_capped(graph, start, other, max_hops, limit)
            found = read.items
            if read.cut:
                result.cut.append((start, other))
            result.pairs.append((start, other))
            result.found[(start, other)] = len(found)
            if found and other not in queue:
                queue.append(other)
            for path in found:
                key = canonical_key(path)
                if key not in seen:
                    seen.add(key)
                    result.paths.append(path)
    return result


def subgraph(paths: Sequence[Path]) -> list[Triple]:
    """The distinct triples of ``paths``, in first-seen order."""
    triples: dict[tuple[str, str, str], Triple] = {}
    for path in paths:
        for hop in path.hops:
            triples.setdefault(hop.triple.key(), hop.triple)
    return list(triples.values())


@dataclass(frozen=True)
class ScoredPath:
    path: Path
    key_entities: int
    score: float
    anchors: int = 0


def rank_paths(
    paths: Sequence[Path],
    keys: Sequence[NamedNode],
    ranks: Mapping[Term, float],
    *,
    anchors: Sequence[NamedNode] = (),
) -> list[ScoredPath]:
    """Paths ordered by the question entities (``anchors``) they hold, then by bucket
    (key entities held, most first), then by mean PageRank.

    Without anchors this is the paper's order. With them, a path between two entities
    the chain of thought guessed never outranks one that starts from the question.
    """
    wanted, anchored = set(keys), set(anchors)
    scored = []
    for path in paths:
        nodes = path.nodes
        held = len({n for n in nodes if n in wanted})
        mean = sum(ranks.get(n, 0.0) for n in nodes) / len(nodes) if nodes else 0.0
        scored.append(ScoredPath(path, held, mean, len({n for n in nodes if n in anchored})))
    return sorted(
        scored, key=lambda s: (-s.anchors, -s.key_entities, -s.score, canonical_key(s.path))
    )


def select_paths(ranked: Sequence[ScoredPath], top_k: int) -> list[ScoredPath]:
    """The first ``top_k`` of the ranked list: the fullest bucket first, then the next."""
    return list(ranked[:top_k])


@dataclass(frozen=True)
class Neighbour:
    """A 1-hop triple around ``entity``; ``side`` says whether the entity is its subject."""

    entity: NamedNode
    side: Side
    triple: Triple


@dataclass
class NeighbourReport:
    fetched: int = 0
    on_main_path: int = 0
    same_relation: int = 0
    duplicates: int = 0
    candidates: list[Neighbour] = field(default_factory=list)
    cut: list[NamedNode] = field(default_factory=list)  # entities with more than the cap


def _used_relations(main: Sequence[Path]) -> set[tuple[str, str, Side]]:
    used: set[tuple[str, str, Side]] = set()
    for path in main:
        for hop in path.hops:
            t = hop.triple
            used.add((term_key(t.subject), t.predicate.value, "out"))
            used.add((term_key(t.object), t.predicate.value, "in"))
    return used


def neighbour_candidates(
    graph: KnowledgeGraph,
    entities: Sequence[str | NamedNode],
    main: Sequence[Path],
    *,
    per_entity: int = DEFAULT_NEIGHBORS,
) -> NeighbourReport:
    """1-hop triples around ``entities``, minus main-path triples and repeated relations.

    Where a main path leaves (or enters) an entity by relation R, the entity's other
    R triples on that side are dropped: the main path already speaks for R there.
    """
    report = NeighbourReport()
    on_main = {t.key() for t in subgraph(main)}
    used = _used_relations(main)
    seen: set[tuple[str, str, str]] = set()
    for entity in dict.fromkeys(to_iri(e) for e in entities):
        read = neighbors_capped(graph, entity, per_entity)
        if read.cut:
            report.cut.append(entity)
        for triple in read.items:
            report.fetched += 1
            side: Side = "out" if triple.subject == entity else "in"
            if triple.key() in on_main:
                report.on_main_path += 1
            elif (term_key(entity), triple.predicate.value, side) in used:
                report.same_relation += 1
            elif triple.key() in seen:
                report.duplicates += 1
            else:
                seen.add(triple.key())
                report.candidates.append(Neighbour(entity, side, triple))
    return report


def spread(candidates: Sequence[Neighbour], limit: int) -> list[Neighbour]:
    """At most ``limit`` candidates, taken in turn from each (entity, relation, side) group.

    One busy relation (an actor's hundred films) cannot crowd out the rest.
    """
    groups: dict[tuple[str, str, Side], list[Neighbour]] = {}
    for item in candidates:
        groups.setdefault((item.entity.value, item.triple.predicate.value, item.side), []).append(
            item
        )
    picked: list[Neighbour] = []
    depth = 0
    while len(picked) < limit and any(len(g) > depth for g in groups.values()):
        for group in groups.values():
            if len(group) > depth and len(picked) < limit:
                picked.append(group[depth])
        depth += 1
    return picked

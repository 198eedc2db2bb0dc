"""Junctions of relation paths: how many of the entities one step reaches go on along
the next.

A relation path people ask about joins two relations that most entities between them
have: every director has directed films, so ``directed by → directed by⁻¹`` (films by
the same director) is a junction the graph commonly makes. A junction only a few
entities make is most often a name collision: in MetaQA a genre that is also a film's
title ("Drama") has a director, so ``has genre → directed by`` leaves most films, yet
13 % of genres have a director. Such paths read close to many questions ("which films
share the director") and answer none of them.

A junction's share is read from samples of the entities on either side of it (two
queries per side of a predicate), kept per graph and version of its data. Paths with a junction below a
least share (``plan_min_junction``) are not worded into a memory learned from the
graph. (Zero-shot planning does not check them: on a graph with hundreds of
predicates the samples cost more than the plan, see docs/benchmarks.md.) One-step paths have no junction and always stay.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|has_genre|Drama\\n"
...                  "Drama|directed_by|Someone\\nAli|has_genre|Action\\n"
...                  "Ali|directed_by|Michael Mann\\n", name="kb.txt")
>>> d, g = sorted(kg.relation_vocabulary(), key=lambda p: p.value)
>>> same_director, collision = ((d, True), (d, False)), ((g, True), (d, True))
>>> [len(p) for p in coherent_paths(kg, [same_director, collision], least=0.6)]
[2]
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Iterable, Sequence

from pyoxigraph import NamedNode

from middleware.kg.base import KnowledgeGraph
from middleware.kg.walks import RelationPath, RelationStep

JUNCTION_SAMPLE = 100  # ends of a step read to tell how many go on along the next
KEPT_SAMPLES = 5000  # predicate sides whose samples one graph keeps (then all are dropped)

Junction = tuple[RelationStep, RelationStep]


Side = tuple[NamedNode, bool]  # a predicate's subjects (True) or objects (False)


class _Sample:
    """Some entities of one side of a predicate, and the shares read of them so far."""

    def __init__(self, nodes: list[NamedNode]) -> None:
        self.nodes = nodes
        self.shares: dict[RelationStep, float] = {}
        self.read: set[NamedNode] = set()  # the predicates counted


_LOCK = threading.Lock()
_KEPT: weakref.WeakKeyDictionary[object, tuple[int, dict[Side, _Sample]]] = (
    weakref.WeakKeyDictionary()
)


def junction_shares(graph: KnowledgeGraph, paths: Iterable[RelationPath]) -> dict[Junction, float]:
    """For each two consecutive steps of ``paths``, how commonly the graph makes that
    junction: the share of the first step's ends that have the second step, or the
    share of the second step's starts that the first step reaches, whichever is more
    (a relation few entities have, such as a film's language, is still joined to every
    other by those that have it). Each from a sample, kept per graph and version."""
    junctions = {j for path in paths for j in itertools.pairwise(path)}
    wanted: dict[Side, set[NamedNode]] = {}
    for (p, forward), (q, onward) in junctions:
        wanted.setdefault((p, not forward), set()).add(q)  # the first step's ends
        wanted.setdefault((q, onward), set()).add(p)  # the second step's starts
    samples = {side: _sample(graph, side, predicates) for side, predicates in wanted.items()}
    shares: dict[Junction, float] = {}
    for first, after in junctions:
        (p, forward), (q, onward) = first, after
        ends, starts = samples[(p, not forward)], samples[(q, onward)]
        shares[(first, after)] = max(
            ends.shares.get(after, 0.0), starts.shares.get((p, not forward), 0.0)
        )
    return shares


def _sample(graph: KnowledgeGraph, side: Side, predicates: set[NamedNode]) -> _Sample:
    """The kept sample of ``side``, with the shares of ``predicates`` (both ways) read."""
    kept = _kept(graph)
    with _LOCK:
        sample = kept.get(side)
    if sample is None:
        predicate, subjects = side
        sample = _Sample(graph.sample_ends(predicate, subjects=subjects, limit=JUNCTION_SAMPLE))
    missing = sorted(predicates - sample.read, key=lambda p: p.value)
    counted = graph.step_shares(sample.nodes, missing) if missing else {}
    with _LOCK:
        for predicate in missing:
            for way in (True, False):
                sample.shares[(predicate, way)] = counted.get((predicate, way), 0.0)
        sample.read.update(missing)
        if side not in kept and len(kept) >= KEPT_SAMPLES:
            kept.clear()
        kept[side] = sample
    return sample


def _kept(graph: KnowledgeGraph) -> dict[Side, _Sample]:
    """The samples kept for ``graph`` as its data is now (a load starts anew)."""
    graph.refresh()
    with _LOCK:
        version, kept = _KEPT.get(graph, (graph.version, {}))
        if version != graph.version:
            kept = {}
        _KEPT[graph] = (graph.version, kept)
        return kept


def coherent(path: RelationPath, shares: dict[Junction, float], least: float) -> bool:
    """Whether every junction of ``path`` is made by at least ``least`` of the ends."""
    return all(shares.get(j, 0.0) >= least for j in itertools.pairwise(path))


def coherent_paths(
    graph: KnowledgeGraph, paths: Sequence[RelationPath], *, least: float
) -> list[RelationPath]:
    """``paths`` without those that have a junction below ``least`` (0: all of them)."""
    if least <= 0:
        return list(paths)
    shares = junction_shares(graph, (p for p in paths if len(p) > 1))
    return [p for p in paths if coherent(p, shares, least)]

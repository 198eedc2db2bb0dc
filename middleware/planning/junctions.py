"""Junctions of relation paths: how many of the entities one step reaches go on along
the next.

A relation path people ask about joins two relations that most entities between them
have: every director has directed films, so ``directed by → directed by⁻¹`` (films by
the same director) is a junction the graph commonly makes. A junction only a few
entities make is most often a name collision: in MetaQA a genre that is also a film's
title ("Drama") has a director, so ``has genre → directed by`` leaves most films,
yet 13 % of genres have a director. Such paths read close to many questions ("which
films share the director") and answer none of them.

A junction's share is the share of a sample of the first step's ends that have the
second step or, whichever is more, of the second step's starts that the first step
reaches: a relation few entities have (a film's language) is still joined to the
others by those that have it. Two queries per side of a predicate. Paths with a
junction below a least share (``plan_min_junction``) are not worded into a memory
learned from the graph. One-step paths have no junction and always stay.

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
from collections.abc import Iterable, Sequence

from pyoxigraph import NamedNode

from middleware.kg.base import KnowledgeGraph
from middleware.kg.sampling import STEP_SAMPLE
from middleware.kg.walks import RelationPath, RelationStep

Junction = tuple[RelationStep, RelationStep]
Side = tuple[NamedNode, bool]  # a predicate's subjects (True) or objects (False)


def junction_shares(graph: KnowledgeGraph, paths: Iterable[RelationPath]) -> dict[Junction, float]:
    """Each junction of ``paths`` with its share: of the first step's ends that have
    the second step, or of the second step's starts the first reaches, whichever is
    more; each read from a sample of ``STEP_SAMPLE`` entities."""
    junctions = {j for path in paths for j in itertools.pairwise(path)}
    wanted: dict[Side, set[NamedNode]] = {}
    for (p, forward), (q, onward) in junctions:
        wanted.setdefault((p, not forward), set()).add(q)  # the first step's ends
        wanted.setdefault((q, onward), set()).add(p)  # the second step's starts
    read: dict[Side, dict[RelationStep, float]] = {}
    for side, predicates in wanted.items():
        sample = graph.sample_ends(side[0], subjects=side[1], limit=STEP_SAMPLE)
        read[side] = graph.step_shares(sample, sorted(predicates, key=lambda p: p.value))
    shares: dict[Junction, float] = {}
    for first, after in junctions:
        (p, forward), (q, onward) = first, after
        reached = (p, not forward)  # the step back that an end of ``first`` has
        ahead = read[reached].get(after, 0.0)
        behind = read[(q, onward)].get(reached, 0.0)
        shares[(first, after)] = max(ahead, behind)
    return shares


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

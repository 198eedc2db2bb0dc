"""Mining: the relation paths that lead from a question's topic to its answers.

For a few gold answers, the simple graph paths (1 hop, then 2, ... up to ``max_hops``,
stopping once every answer is reached; either direction) from the topic are found by
the bounded search of ``path_search.py`` (each end's edges read up to ``cap``, then
met in the middle); each distinct relation path among them is then followed from the
topic, a step at a time from at most ``max_walks`` entities, and scored by the gold answers
it reaches and the other entities it reaches too. The paths that reach the most
answers with the fewest others are kept (ties kept together). Every step is bounded:
answers tried, paths per pair, entities per step, walks per relation path, and the
question's ``SearchBudget`` of queries and seconds.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text(
...     "Heat|directed_by|Michael Mann\\nCollateral|directed_by|Michael Mann\\n"
...     "Heat|starred_actors|Al Pacino\\n", name="kb.txt")
>>> iri = lambda name: kg.search(name)[0].iri
>>> best = mine(kg, [iri("Michael Mann")], [iri("Heat"), iri("Collateral")])
>>> [(m.reached, m.others, len(from_key(m.key))) for m in best]
[(2, 0, 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from middleware.kg.base import KnowledgeGraph
from middleware.kg.terms import Term
from middleware.planning.path_search import CAP, SearchBudget, StepsTaken, relation_paths
from middleware.planning.reach_count import Reached, reach_count
from middleware.planning.relpaths import ends, from_key, path_key, walked


@dataclass(frozen=True)
class MinedPath:
    """A relation path from a topic, with the gold answers it reaches and the rest."""

    key: str
    topic: str
    reached: int
    others: int

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.key,
            "topic": self.topic,
            "reached": self.reached,
            "others": self.others,
        }


def candidate_keys(
    graph: KnowledgeGraph,
    topic: NamedNode,
    golds: Sequence[NamedNode],
    *,
    max_hops: int,
    answers_tried: int,
    paths_per_pair: int,
    cap: int = CAP,
    budget: SearchBudget | None = None,
) -> dict[str, set[Term]]:
    """Relation paths of the simple paths from ``topic`` to the first few answers, each
    with the answers a path of it was found to reach."""
    keys: dict[str, set[Term]] = {}
    for gold in list(golds)[:answers_tried]:
        if gold == topic:
            continue
        if bounded(graph):
            found = relation_paths(
                graph, topic, gold, max_hops=max_hops, cap=cap, limit=paths_per_pair, budget=budget
            )
            for relation_path in found:
                keys.setdefault(path_key(relation_path), set()).add(gold)
            continue
        if budget is not None:
            budget.spend()
        for path in graph.paths(topic, gold, max_hops=max_hops, limit=paths_per_pair):
            keys.setdefault(path_key(walked(path)), set()).add(gold)
    return keys


def bounded(graph: KnowledgeGraph) -> bool:
    """Whether the bounded search runs on ``graph`` (it needs the project's templates);
    else the graph's own path and walk queries are used."""
    return graph.capabilities.templates


def reached_by(
    graph: KnowledgeGraph,
    topic: NamedNode,
    key: str,
    wanted: set[NamedNode],
    *,
    max_walks: int,
    budget: SearchBudget | None,
    taken: StepsTaken | None = None,
) -> Reached:
    """Where relation path ``key`` leads from ``topic``: the ``wanted`` entities among
    its ends, and how many ends in all (``taken``: the steps already taken from it, see
    ``reach``)."""
    if bounded(graph):
        path = from_key(key)
        return reach_count(graph, topic, path, wanted, limit=max_walks, budget=budget, taken=taken)
    if budget is not None:
        budget.spend()
    reached = set(ends(graph.follow(topic, from_key(key), limit=max_walks)))
    return Reached(frozenset(reached & wanted), len(reached))


def mine(
    graph: KnowledgeGraph,
    topics: Sequence[NamedNode],
    golds: Sequence[NamedNode],
    *,
    max_hops: int = 3,
    answers_tried: int = 5,
    paths_per_pair: int = 20,
    max_walks: int = 2000,
    cap: int = CAP,
    budget: SearchBudget | None = None,
) -> list[MinedPath]:
    """The best relation paths from any of ``topics`` to ``golds`` (empty if none); a
    ``budget`` that runs out raises ``SearchBudgetSpent``."""
    wanted = set(golds)
    scored: list[MinedPath] = []
    seen: set[tuple[str, str]] = set()
    taken = StepsTaken()  # steps shared by the candidate paths
    for hops in range(1, max_hops + 1):  # shortest first: stop once every answer is reached
        for topic in dict.fromkeys(topics):
            for key, found in candidate_keys(
                graph,
                topic,
                golds,
                max_hops=hops,
                answers_tried=answers_tried,
                paths_per_pair=paths_per_pair,
                cap=cap,
                budget=budget,
            ).items():
                if (topic.value, key) in seen:
                    continue
                seen.add((topic.value, key))
                where = reached_by(
                    graph, topic, key, wanted, max_walks=max_walks, budget=budget, taken=taken
                )
                # the walk found to an answer counts even where a hub's sample missed it
                hits = len(where.answers | found)
                if hits:
                    scored.append(MinedPath(key, topic.value, hits, where.others))
        if scored and max(m.reached for m in scored) >= len(wanted):
            break
    if not scored:
        return []
    best = max(m.reached for m in scored)
    top = [m for m in scored if m.reached == best]
    fewest = min(m.others for m in top)
    return [m for m in top if m.others == fewest]

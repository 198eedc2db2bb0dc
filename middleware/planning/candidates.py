"""Zero-shot candidates: the relation paths that exist from a topic, grown hop by hop.

From the topic, the steps that leave it (``relation_steps``); from where each step
leads (a bounded sample of its walks' ends), the steps that leave those; and so on up
to ``max_hops``. Every step exists where it is taken (a path may still have no walk
that avoids revisiting a node: executing it then finds nothing), and the query count
is bounded (``max_queries``), so it stays cheap on an endpoint.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|in_language|English\\n", name="kb.txt")
>>> found = grow(kg, kg.search("Michael Mann")[0].iri, max_hops=2)
>>> [[p.value.rsplit("/", 1)[-1] + ("" if f else "⁻¹") for p, f in path] for path in found]
[['directed_by⁻¹'], ['directed_by⁻¹', 'directed_by'], ['directed_by⁻¹', 'in_language']]
"""

from __future__ import annotations

from pyoxigraph import NamedNode

from middleware.kg.base import KnowledgeGraph
from middleware.kg.walks import RelationPath
from middleware.planning.relpaths import ends

FRONTIER = 50  # walks sampled per path to find the steps that go on from it
# walks a frontier's sample is sorted from: past it (a hub), the engine's own order. A
# sample only says which steps go on, so it need not sort SORT_WINDOW walks at every hub.
FRONTIER_WINDOW = 200


def grow(
    graph: KnowledgeGraph,
    topic: NamedNode,
    *,
    max_hops: int = 3,
    max_queries: int = 300,
    max_paths: int = 500,
) -> list[RelationPath]:
    """Relation paths of 1..``max_hops`` steps from ``topic``, shortest first. A step
    back along the one just taken is kept (it reaches co-actors, films sharing a
    director); walks never revisit a node, so it never leads back to the same one."""
    budget = max_queries
    found: list[RelationPath] = []
    layer: list[RelationPath] = [()]
    for _ in range(max_hops):
        grown: list[RelationPath] = []
        for path in layer:
            if budget <= 0 or len(found) + len(grown) >= max_paths:
                break
            if path:
                budget -= 1
                frontier = ends(graph.follow(topic, path, limit=FRONTIER, window=FRONTIER_WINDOW))
            else:
                frontier = [topic]
            if not frontier or budget <= 0:
                continue
            budget -= 1
            grown += [(*path, step) for step in graph.relation_steps(frontier)]
        found += grown
        layer = grown
    return found[:max_paths]

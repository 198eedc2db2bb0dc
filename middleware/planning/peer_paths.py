"""Relation paths a topic lacks that its peers hold: what a question reads as when it
asks about a relation the graph does not hold for its entity.

"Who directed Honey?", where the graph gives Honey no director: the zero-shot planner
still finds paths from Honey (the directors of films that share its actors), and the
best of them may read well enough to be given. Yet the nodes that stand where Honey
stands, two steps away by a step out and one back the other way (films that share an
actor with it; for a person, the others in the same films), do hold ``directed by``.
When a path the topic lacks but its peers hold reads better as the question than any
path the topic holds, an answer is likely a detour; the calibration weighs by how
much (``Planning.unheld`` in zero-shot mode, ``planner.py``).

The steps are read off the paths the planner grew from the topic (3 steps), so they
cost no query. The lacked paths are each such step alone, out and straight back over
it (to the peers it would have), and out and back then a step the topic or its peers
hold (the genres of the films that would share its director).

>>> from pyoxigraph import NamedNode
>>> d, s = NamedNode("http://x/directed_by"), NamedNode("http://x/starred_actors")
>>> grown = [((s, True),), ((s, True), (s, False)), ((s, True), (s, False), (d, True))]
>>> [[(p.value[9:], f) for p, f in path] for path in lacked_paths(grown)]
... # doctest: +NORMALIZE_WHITESPACE
[[('directed_by', True)], [('directed_by', True), ('directed_by', False)],
 [('directed_by', True), ('directed_by', False), ('starred_actors', True)],
 [('directed_by', True), ('directed_by', False), ('directed_by', True)]]
"""

from __future__ import annotations

from collections.abc import Sequence

from middleware.kg.walks import RelationPath, RelationStep


def peer_steps(grown: Sequence[RelationPath], *, same_relation: bool = False) -> list[RelationStep]:
    """Steps the topic's peers hold and the topic lacks: the last steps of ``grown``
    3-step paths whose first two go out and back the other way (to a node that stands
    where the topic stands; with ``same_relation``, back over the relation taken out,
    so a country's peers are countries, not the films in its language), in the order
    found."""
    held = {path[0] for path in grown if len(path) == 1}
    found: dict[RelationStep, None] = {}
    for path in grown:
        if len(path) != 3 or path[0][1] == path[1][1] or path[2] in held:
            continue
        if not same_relation or path[0][0] == path[1][0]:
            found.setdefault(path[2])
    return list(found)


def lacked_paths(
    grown: Sequence[RelationPath], steps: Sequence[RelationStep] | None = None
) -> list[RelationPath]:
    """Paths the topic lacks because it lacks their first step: each of ``steps``
    (``peer_steps(grown)`` unless given) alone, out and back over it, and out and back
    then a step the topic holds or one of ``steps``."""
    lacking = peer_steps(grown) if steps is None else list(steps)
    held = list(dict.fromkeys(path[0] for path in grown if len(path) == 1))
    found: list[RelationPath] = []
    for step in lacking:
        back = (step[0], not step[1])
        found += [(step,), (step, back)]
        found += [(step, back, then) for then in [*held, *lacking]]
    return found

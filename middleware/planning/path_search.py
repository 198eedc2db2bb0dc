"""Bounded path search for mining: the relation paths between a topic and an answer,
at a cost set by settings, not by the graph's hubs.

The search meets in the middle. Each end's edges are read, at most ``cap`` each way,
in the store's own order: a hub's edges are sampled, the same ones every time on one
store (sorting them would cost their number; another engine may sample others).
Then, with the ``sparql/mine_links.rq`` lookup between two bounded sets of entities
(given as pairs, ``PAIRS_PER_QUERY`` a query, each pair one index lookup):

- 1 hop: the edges between the two ends;
- 2 hops: the edges between one end and the other's neighbours, from both sides;
- 3 hops: the edges between the two ends' neighbours (``cap`` x ``cap`` lookups at most);
  an end whose edges were cut (a hub) is met from the other end's second ring
  (``around``: of at most ``cap`` x ``RING_PER_NODE`` edges, those that reach the hub
  end; at 100 copies of FB15k-237 every such ring fills its window, at one copy few do).

A path is found whenever its inner entities are among the neighbours read: always when
neither end is a hub past ``cap``; through a hub end when the other end's second ring
fits its window (a hub among the other end's neighbours can fill it, in the store's
order, before the ring reaches the path).
Every query is counted against a ``SearchBudget`` (queries and seconds per question),
which raises ``SearchBudgetSpent`` between queries.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text(
...     "Heat|directed_by|Michael Mann\\nHeat|starred_actors|Al Pacino\\n", name="kb.txt")
>>> iri = lambda name: kg.search(name)[0].iri
>>> found = relation_paths(kg, iri("Michael Mann"), iri("Al Pacino"), max_hops=3)
>>> [[(p.value.rsplit("/", 1)[-1], forward) for p, forward in path] for path in found]
[[('directed_by', False), ('starred_actors', True)]]
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode

from middleware.errors import MiddlewareError
from middleware.kg.base import KnowledgeGraph
from middleware.kg.terms import Term
from middleware.kg.walks import RelationPath, RelationStep

CAP = 200  # edges read each way around an end (setting plan_mine_cap)
# the second ring's window, per edge read around an end: one window for the whole ring
# (cap x 50 = 10,000 edges), which a hub among the ring's nodes can fill by itself
RING_PER_NODE = 50
LINKS_PER_QUERY = 20_000  # rows of one lookup between two sets (cap x cap pairs at most)
PAIRS_PER_QUERY = 5_000  # pairs of entities one lookup query checks

StepKey = tuple[NamedNode, RelationPath, int]  # a start, a relation path prefix, a limit


class StepsTaken(dict[StepKey, list[Term]]):
    """Where each start and relation path prefix led under a limit (``reach``), for one
    question; ``counted``: the prefixes whose last step was only counted
    (``reach_count.py``), so the budget has paid for that step once already."""

    def __init__(self) -> None:
        super().__init__()
        self.counted: set[StepKey] = set()


class SearchBudgetSpent(MiddlewareError):
    """A question's mining used up its queries or seconds."""

    status = 504
    code = "mining_budget"


@dataclass
class SearchBudget:
    """What one question's mining may spend: queries, and seconds from the first."""

    queries: int = 500
    seconds: float = 30.0
    spent: int = 0
    started: float = field(default_factory=time.monotonic)

    def spend(self) -> None:
        """Count one query; past either limit, raise ``SearchBudgetSpent``."""
        elapsed = time.monotonic() - self.started
        if self.spent >= self.queries or elapsed > self.seconds:
            raise SearchBudgetSpent(
                f"mining used its budget ({self.spent} queries, {elapsed:.1f} s; at most "
                f"{self.queries} queries and {self.seconds:g} s per question)",
                hint="raise plan_learn_queries or plan_learn_seconds, or lower plan_max_hops",
            )
        self.spent += 1


def budgeted_select(
    graph: KnowledgeGraph, budget: SearchBudget | None, template: str, **bindings: object
) -> list[dict[str, Term]]:
    """The rows of mining template ``template``, counted against ``budget``."""
    if budget is not None:
        budget.spend()
    skipped = list(graph.profile.skipped_predicates)
    return graph.run_template(template, skipped=skipped, **bindings)  # type: ignore[attr-defined, no-any-return]


def _flag(value: Term | None) -> bool:
    return isinstance(value, Literal) and value.value in ("true", "1")


def edges(
    graph: KnowledgeGraph, node: NamedNode, *, cap: int, budget: SearchBudget | None = None
) -> list[tuple[RelationStep, NamedNode]]:
    """Up to ``cap`` outgoing and ``cap`` incoming edges of ``node`` to other entities,
    each as the step from ``node`` and the entity it reaches."""
    found: list[tuple[RelationStep, NamedNode]] = []
    for template, forward in (("mine_out", True), ("mine_in", False)):
        for row in budgeted_select(graph, budget, template, entity=node, limit=cap):
            p, m = row.get("p"), row.get("m")
            if isinstance(p, NamedNode) and isinstance(m, NamedNode) and m != node:
                found.append(((p, forward), m))
    return found


def links(
    graph: KnowledgeGraph,
    sources: Iterable[NamedNode],
    targets: Iterable[NamedNode],
    *,
    budget: SearchBudget | None = None,
) -> list[tuple[NamedNode, RelationStep, NamedNode]]:
    """The edges between ``sources`` and ``targets``, each as (source, step from it,
    target), in ``_edge_rows``' order. Past ``LINKS_PER_QUERY`` edges (a safety cap
    that dense sets of hubs can reach) those kept are a sample in the engine's order."""
    xs, ys = sorted(set(sources), key=str), sorted(set(targets), key=str)
    pairs = [(x, y) for x in xs for y in ys if x != y]
    rows: list[dict[str, Term]] = []
    for start in range(0, len(pairs), PAIRS_PER_QUERY):
        chunk = pairs[start : start + PAIRS_PER_QUERY]
        rows += budgeted_select(
            graph, budget, "mine_links", pairs=chunk, limit=LINKS_PER_QUERY - len(rows)
        )
        if len(rows) >= LINKS_PER_QUERY:
            break
    return _edge_rows(rows)


def _edge_rows(rows: list[dict[str, Term]]) -> list[tuple[NamedNode, RelationStep, NamedNode]]:
    """Rows of ``?x ?p ?forward ?y`` as (x, step from x, y), ordered by x, y, p, then
    backward before forward (as ``ORDER BY ?x ?y ?p ?forward`` orders them: sorting here
    costs a fraction of what the engine spent on it)."""
    found = []
    for row in rows:
        x, p, y = row.get("x"), row.get("p"), row.get("y")
        if isinstance(x, NamedNode) and isinstance(p, NamedNode) and isinstance(y, NamedNode):
            found.append((x, (p, _flag(row.get("forward"))), y))
    found.sort(key=lambda edge: (edge[0].value, edge[2].value, edge[1][0].value, edge[1][1]))
    return found


def relation_paths(
    graph: KnowledgeGraph,
    start: NamedNode,
    end: NamedNode,
    *,
    max_hops: int,
    cap: int = CAP,
    limit: int = 20,
    budget: SearchBudget | None = None,
) -> list[RelationPath]:
    """The relation paths of the first ``limit`` simple paths from ``start`` to ``end``
    (1..``max_hops`` hops, shortest first; among equals by their inner entities' IRIs,
    then their steps), found by the bounded search above."""
    if start == end:
        return []
    simple: list[tuple[tuple[str, ...], RelationPath]] = []  # (inner entities, steps)
    for _, step, _ in links(graph, [start], [end], budget=budget):
        simple.append(((), (step,)))
    if max_hops >= 2 and len(simple) < limit:
        near_start = _by_node(edges(graph, start, cap=cap, budget=budget), skip={end})
        # the steps from each neighbour of the end towards the end
        toward_end = [((p, not f), m) for (p, f), m in edges(graph, end, cap=cap, budget=budget)]
        near_end = _by_node(toward_end, skip={start})
        two: dict[tuple[tuple[str, ...], RelationPath], None] = {}
        for m, step, _ in links(graph, near_start, [end], budget=budget):
            for first in near_start[m]:
                two.setdefault(((m.value,), (first, step)), None)
        for _, step, m in links(graph, [start], near_end, budget=budget):
            for last in near_end[m]:
                two.setdefault(((m.value,), (step, last)), None)
        simple += sorted(two, key=_order)
        if max_hops >= 3 and len(simple) < limit:
            middle = links(graph, near_start, near_end, budget=budget)
            # an end whose edges were cut (a hub) is met from the other end's second ring
            if sum(map(len, near_end.values())) >= cap:
                ring = around(graph, near_start, end, limit=cap * RING_PER_NODE, budget=budget)
                middle += [(m1, s, m2) for m1, s, m2 in ring if m2 not in (start, end)]
                near_end = {**near_end, **_toward(graph, [m for _, _, m in ring], end, budget)}
            if sum(map(len, near_start.values())) >= cap:
                ring = around(graph, near_end, start, limit=cap * RING_PER_NODE, budget=budget)
                middle += [
                    (m1, (p, not f), m2) for m2, (p, f), m1 in ring if m1 not in (start, end)
                ]
                near_start = {
                    **_toward(graph, [m for _, _, m in ring], start, budget, back=True),
                    **near_start,
                }
            three = {
                ((m1.value, m2.value), (first, step, last)): None
                for m1, step, m2 in middle
                if m1 != m2
                for first in near_start.get(m1, [])
                for last in near_end.get(m2, [])
            }
            simple += sorted(three, key=_order)
    return list(dict.fromkeys(steps for _, steps in simple[:limit]))


def around(
    graph: KnowledgeGraph,
    nodes: Iterable[NamedNode],
    toward: NamedNode,
    *,
    limit: int,
    budget: SearchBudget | None = None,
) -> list[tuple[NamedNode, RelationStep, NamedNode]]:
    """Of up to ``limit`` edges of ``nodes`` to other entities, those whose entity has an
    edge to ``toward``, each as (node, step from it, entity): the check runs inside the
    engine, so the edges that lead nowhere never come back."""
    xs = sorted(set(nodes), key=str)
    if not xs:
        return []
    # ``limit`` too: a profile's own template may still cut its rows itself
    rows = budgeted_select(
        graph, budget, "mine_around_toward", nodes=xs, target=toward, window=limit, limit=limit
    )
    return _edge_rows(rows)


def _toward(
    graph: KnowledgeGraph,
    nodes: Sequence[NamedNode],
    end: NamedNode,
    budget: SearchBudget | None,
    *,
    back: bool = False,
) -> dict[NamedNode, list[RelationStep]]:
    """The steps from each of ``nodes`` to ``end`` (``back``: from ``end`` to each)."""
    steps: dict[NamedNode, list[RelationStep]] = defaultdict(list)
    for m, (p, forward), _ in links(graph, nodes, [end], budget=budget):
        step = (p, not forward) if back else (p, forward)
        if step not in steps[m]:
            steps[m].append(step)
    return dict(steps)


def _order(path: tuple[tuple[str, ...], RelationPath]) -> tuple[object, ...]:
    """Inner entities' IRIs, then each step forward first and by predicate."""
    inner, steps = path
    return (inner, [(not forward, p.value) for p, forward in steps])


def _by_node(
    steps: Sequence[tuple[RelationStep, NamedNode]], *, skip: set[NamedNode]
) -> dict[NamedNode, list[RelationStep]]:
    grouped: dict[NamedNode, list[RelationStep]] = defaultdict(list)
    for step, node in steps:
        if node not in skip and step not in grouped[node]:
            grouped[node].append(step)
    return dict(grouped)


def reach(
    graph: KnowledgeGraph,
    start: NamedNode,
    path: RelationPath,
    *,
    limit: int = 2000,
    budget: SearchBudget | None = None,
    taken: StepsTaken | None = None,
) -> set[Term]:
    """The entities ``path`` leads to from ``start``, one step at a time: each step
    from at most ``limit`` entities (the first in IRI order) to at most ``limit``
    others; no step comes back to ``start``. ``taken`` keeps where each start and path
    prefix led, so paths that begin alike (one question's candidates) share their steps."""
    frontier: list[Term] = [start]
    for done in range(1, len(path) + 1):
        prefix = (start, tuple(path[:done]), limit)
        if taken is not None and prefix in taken:
            frontier = taken[prefix]
            continue
        nodes = step_nodes(frontier, limit)
        if not nodes:
            return set()
        # a last step counted before and walked on now is one step, paid for once
        paid = taken is not None and prefix in taken.counted
        rows = budgeted_select(
            graph,
            None if paid else budget,
            "mine_step",
            nodes=nodes,
            step=path[done - 1],
            limit=limit,
        )
        # a walk never comes back through its start
        frontier = [row["y"] for row in rows if row.get("y") not in (None, start)]
        if taken is not None:
            taken[prefix] = frontier
    return set(frontier)


def step_nodes(frontier: Iterable[Term], limit: int) -> list[NamedNode]:
    """The entities a step is taken from: the first ``limit`` of ``frontier``'s IRIs,
    in IRI order (the order the step's sample depends on)."""
    return sorted((n for n in frontier if isinstance(n, NamedNode)), key=str)[:limit]

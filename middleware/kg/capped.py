"""Reads around one node that say whether they were cut: what a method records in its steps.

Each read asks the graph for one row more than its cap; getting it means the node holds
more than the cap, so the rest was cut. The graph's own queries cut a hub's rows at
``SORT_WINDOW``, in the engine's order, before sorting them (``sparql/neighbors_*.rq``,
``follow_*.rq``), so a read costs the window, not the node's degree.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("".join(f"Film {i}|has_genre|Drama\\n" for i in range(5)), name="kb.txt")
>>> drama = kg.search("Drama")[0].iri
>>> read = neighbors_capped(kg, drama, 3)
>>> len(read.items), read.cut
(3, True)
>>> cut_note("triples", "Drama", 3, "qsm_neighbors_per_entity")
'Drama: read 3 triples, more were cut (cap: qsm_neighbors_per_entity = 3)'

A spread read can end short of its cap although more exist (``kg/spread.py``); the note
says how many were read:

>>> cut_note("triples", "Spain", 100, "qsm_neighbors_per_entity", spread=40, read=96)
'Spain: read 96 triples, more were cut (cap: qsm_neighbors_per_entity = 100); a hub: read from 40 of its relations in turn'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from pyoxigraph import NamedNode

from middleware.kg.base import MAX_LIMIT, SORT_WINDOW, Direction, KnowledgeGraph, Path, Triple
from middleware.kg.spread import spread_neighbors

T = TypeVar("T")


@dataclass(frozen=True)
class Capped(Generic[T]):
    """At most ``cap`` items; ``cut`` when the graph held more."""

    items: list[T]
    cut: bool
    cap: int
    spread: int = 0  # the relations a hub's read was spread over (0: not spread)


def _ask(cap: int) -> int:
    return min(cap + 1, MAX_LIMIT)


def _capped(items: list[T], cap: int) -> Capped[T]:
    return Capped(items[:cap], len(items) > cap, cap)


def neighbors_capped(
    graph: KnowledgeGraph,
    entity: NamedNode,
    cap: int,
    direction: Direction = "both",
    *,
    spread: bool = False,
) -> Capped[Triple]:
    """At most ``cap`` triples around ``entity`` (the graph's order), and whether more
    exist. With ``spread``, both directions, and a hub (``SORT_WINDOW`` edges or more,
    and more than ``cap``, counted first; in a store in this process) of two relations
    or more, they are taken in turn from each of its relations (``kg/spread.py``);
    ``spread`` says over how many."""
    if spread and direction == "both" and graph.capabilities.in_process:
        # a hub is known from a capped count first: its plain read (a window of
        # ``SORT_WINDOW`` edges, sorted) would be thrown away for the spread one
        hub = max(SORT_WINDOW, cap + 1)
        if graph.degree(entity, at_most=hub) >= hub:
            triples, relations = spread_neighbors(graph, entity, cap)
            if relations >= 2:  # one relation: one sample of it for another
                return Capped(triples, True, cap, relations)
    return _capped(graph.neighbors(entity, direction=direction, limit=_ask(cap)), cap)


def follow_capped(
    graph: KnowledgeGraph, start: NamedNode, path: tuple[tuple[NamedNode, bool], ...], cap: int
) -> Capped[Path]:
    """At most ``cap`` walks of a relation path from ``start``, and whether more exist."""
    return _capped(graph.follow(start, path, limit=_ask(cap)), cap)


def paths_capped(
    graph: KnowledgeGraph, a: NamedNode, b: NamedNode, max_hops: int, cap: int
) -> Capped[Path]:
    """At most ``cap`` paths between ``a`` and ``b``, and whether more exist."""
    return _capped(graph.paths(a, b, max_hops=max_hops, limit=_ask(cap)), cap)


def cut_note(
    what: str, where: str, cap: int, setting: str, *, spread: int = 0, read: int | None = None
) -> str:
    """A step note: what was read at ``where`` (``read`` items, else ``cap``), that more
    was cut, and the setting that caps it; ``spread``: over how many of a hub's
    relations the read was spread."""
    note = f"{where}: read {cap if read is None else read} {what}, more were cut"
    note += f" (cap: {setting} = {cap})"
    if spread:
        note += f"; a hub: read from {spread} of its relations in turn"
    return note

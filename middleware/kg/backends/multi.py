"""Several graphs at once, as the graph layer sees them: each under its own name.

Triples carry the name of the graph they came from (``Triple.source``), so results from
several sources can be merged and still say where each fact lives. What a method does
when one of them fails is the method's business (``methods/fan_out.py``).

>>> from middleware.kg.backends.local import LocalStore
>>> check_names([LocalStore(name="a"), LocalStore(name="a")])
Traceback (most recent call last):
...
middleware.errors.BadRequest: two sources are both named 'a' (give each source its own name (LocalStore(name=...), [sources.NAME]))
"""

from __future__ import annotations

from collections.abc import Sequence

from middleware.errors import BadRequest
from middleware.kg.base import KnowledgeGraph


def check_names(graphs: Sequence[KnowledgeGraph]) -> None:
    """Sources must have distinct names: facts are told apart by them."""
    seen: set[str] = set()
    for graph in graphs:
        if graph.name in seen:
            raise BadRequest(
                f"two sources are both named {graph.name!r}",
                hint="give each source its own name (LocalStore(name=...), [sources.NAME])",
            )
        seen.add(graph.name)

"""The multiple-choice subgraph: nodes on short paths between question and choice entities.

For each question entity and each choice entity the graph's path query
(``KnowledgeGraph.paths``, SPARQL) returns the paths of at most ``max_hops`` hops; their
hops, usable in both directions, are the only steps the walk may take.

>>> from middleware.kg.backends.local import LocalStore
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|starred_actors|Al Pacino\\n", name="kb.txt")
>>> pacino, mann = (kg.search(n)[0].iri for n in ("Al Pacino", "Michael Mann"))
>>> sub = Subgraph.between(kg, [pacino], [mann], max_hops=2, per_pair=10)
>>> sorted(str(h.end.value).rsplit("/", 1)[-1] for h in sub.steps(pacino))
['Heat']
>>> sub.reaches(mann), sub.size
(True, 2)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from pyoxigraph import NamedNode

from middleware.kg.base import Hop, KnowledgeGraph, Path
from middleware.kg.capped import paths_capped
from middleware.kg.terms import Term


@dataclass
class Subgraph:
    """Steps along the paths found, from each node, in both directions."""

    paths: list[Path] = field(default_factory=list)
    cut: list[tuple[NamedNode, NamedNode]] = field(default_factory=list)  # pairs past per_pair
    _steps: dict[Term, list[Hop]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def between(
        cls,
        graph: KnowledgeGraph,
        starts: Sequence[NamedNode],
        ends: Sequence[NamedNode],
        *,
        max_hops: int,
        per_pair: int,
    ) -> Subgraph:
        sub = cls()
        for start in starts:
            for end in ends:
                if start != end:
                    read = paths_capped(graph, start, end, max_hops, per_pair)
                    sub.add(read.items)
                    if read.cut:
                        sub.cut.append((start, end))
        return sub

    def add(self, paths: Sequence[Path]) -> None:
        for path in paths:
            self.paths.append(path)
            for hop in path.hops:
                for step in (hop, Hop(hop.triple, not hop.forward)):
                    if step not in self._steps[step.start]:
                        self._steps[step.start].append(step)

    def steps(self, node: Term) -> list[Hop]:
        """The hops that leave ``node`` inside the subgraph, in the order found."""
        return list(self._steps.get(node, ()))

    def reaches(self, node: Term) -> bool:
        return node in self._steps

    @property
    def size(self) -> int:
        """Distinct triples in the subgraph."""
        return len({h.triple.key() for path in self.paths for h in path.hops})

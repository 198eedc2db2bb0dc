"""Core graph types and the ``KnowledgeGraph`` protocol every backend satisfies.

The operations themselves are written once, over SPARQL templates, in
``kg/operations.py``; backends (``kg/backends/``) only move bytes. What a backend can
do beyond the protocol's common ground is said by its :class:`Capabilities`, never
found out by probing for attributes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Literal as TypingLiteral
from typing import Protocol, cast, runtime_checkable

from pyoxigraph import NamedNode

from middleware.errors import BadRequest
from middleware.kg.profiles import Profile
from middleware.kg.sameas import TemplateGraph
from middleware.kg.sparql_guard import QueryDataset, QueryPolicy
from middleware.kg.terms import Node, Term, term_key

Direction = TypingLiteral["out", "in", "both"]
MAX_LIMIT = 10_000
# Rows around one node read before sorting: up to this many, a read is the same sorted
# cut on every engine; past it (a hub), a sample in the engine's own order is sorted.
SORT_WINDOW = 2_000


def checked_limit(limit: int, what: str) -> int:
    """``limit`` if it is an int from 1 to ``MAX_LIMIT``, else a BadRequest naming ``what``."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise BadRequest(f"{what} limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    return limit


@dataclass(frozen=True)
class Triple:
    """One statement, tagged with the name of the graph it came from."""

    subject: Node
    predicate: NamedNode
    object: Term
    source: str | None = None

    def key(self) -> tuple[str, str, str]:
        return (term_key(self.subject), term_key(self.predicate), term_key(self.object))


@dataclass(frozen=True)
class Hop:
    """A triple walked in one direction: ``forward`` means subject → object."""

    triple: Triple
    forward: bool = True

    @property
    def start(self) -> Term:
        return self.triple.subject if self.forward else self.triple.object

    @property
    def end(self) -> Term:
        return self.triple.object if self.forward else self.triple.subject


@dataclass(frozen=True)
class Path:
    """A walk from ``nodes[0]`` to ``nodes[-1]``; each hop keeps its direction."""

    hops: tuple[Hop, ...]

    @property
    def nodes(self) -> tuple[Term, ...]:
        if not self.hops:
            return ()
        return (self.hops[0].start, *(hop.end for hop in self.hops))

    def __len__(self) -> int:
        return len(self.hops)

    def key(self) -> tuple[tuple[tuple[str, str, str], bool], ...]:
        return tuple((hop.triple.key(), hop.forward) for hop in self.hops)


def turned(path: Path) -> Path:
    """``path`` walked the other way, from its last node to its first."""
    return Path(tuple(Hop(hop.triple, not hop.forward) for hop in reversed(path.hops)))


@dataclass(frozen=True)
class Entity:
    """A graph entity with what is known of it; ``score`` is set by linking."""

    iri: NamedNode
    label: str | None = None
    source: str | None = None
    aliases: tuple[str, ...] = ()
    description: str | None = None
    score: float | None = None
    match: str | None = None


@dataclass(frozen=True)
class LabelRow:
    """One label (or alias) of an entity, with its language tag if it has one."""

    entity: NamedNode
    text: str
    alias: bool = False
    language: str | None = None


@dataclass
class QueryResult:
    """The result of any SPARQL query: SELECT rows, an ASK boolean or graph triples."""

    kind: TypingLiteral["select", "ask", "graph"]
    variables: list[str] = field(default_factory=list)
    rows: list[dict[str, Term]] = field(default_factory=list)
    boolean: bool | None = None
    triples: list[tuple[Term, Term, Term]] = field(default_factory=list)
    truncated: bool = False  # rows or triples were cut at the caller's ``max_rows``


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do beyond the operations every graph has.

    ``label_index``: every label can be read in-process (``label_rows()``), so linking
    builds an index once instead of asking the graph per mention. ``in_process``: the
    graph lives in this process (no network between the middleware and the data).
    ``templates``: the project's SPARQL templates run on it (``run_template``), so
    queries such as the owl:sameAs links between sources can be asked of it.
    """

    label_index: bool = False
    in_process: bool = False
    templates: bool = False


@runtime_checkable
class KnowledgeGraph(Protocol):
    """What methods need from a graph; every backend satisfies it."""

    name: str
    profile: Profile
    capabilities: Capabilities

    @property
    def version(self) -> int:
        """Changes whenever the graph's content changes (a load); 0 for remote graphs."""
        ...

    def refresh(self) -> bool:
        """Move to the newest version of the content a load (another process) swapped
        in since; True when it did. Queries do it themselves; call it before trusting
        ``version`` for what was built from the content (a label index, kept steps)."""
        ...

    @property
    def thread_query_count(self) -> int:
        """Queries the calling thread has run on this graph (what one request spent)."""
        ...

    def query(
        self,
        sparql: str,
        *,
        timeout: float | None = None,
        max_rows: int | None = None,
        policy: QueryPolicy | None = None,
        dataset: QueryDataset | None = None,
        base_iri: str | None = None,
    ) -> QueryResult: ...

    def neighbors(
        self, entity: str | NamedNode, *, direction: Direction = "both", limit: int | None = None
    ) -> list[Triple]: ...

    def paths(
        self,
        a: str | NamedNode,
        b: str | NamedNode,
        *,
        max_hops: int | None = None,
        limit: int | None = None,
    ) -> list[Path]: ...

    def labels(self, entities: Iterable[Term]) -> dict[Term, str]: ...

    def search(self, text: str, *, limit: int = 10) -> list[Entity]: ...

    def degree(self, entity: str | NamedNode, *, at_most: int | None = None) -> int: ...

    def degrees(
        self, entities: Sequence[NamedNode], *, at_most: int | None = None
    ) -> dict[NamedNode, int]: ...

    def describe(self, entity: str | NamedNode) -> Entity: ...

    def has_triples(self, *, timeout: float | None = None) -> bool: ...

    def has_triple(self, triple: Triple) -> bool: ...

    def relation_steps(
        self, nodes: Sequence[NamedNode], *, limit: int = 1000
    ) -> list[tuple[NamedNode, bool]]: ...

    def follow(
        self,
        start: NamedNode,
        path: tuple[tuple[NamedNode, bool], ...],
        *,
        limit: int = 1000,
        window: int = SORT_WINDOW,
    ) -> list[Path]: ...

    def sample_ends(
        self, predicate: NamedNode, *, subjects: bool, limit: int, offset: int = 0
    ) -> list[NamedNode]: ...

    def step_shares(
        self, nodes: Sequence[NamedNode], predicates: Sequence[NamedNode]
    ) -> dict[tuple[NamedNode, bool], float]: ...

    def step_sizes(
        self, entity: NamedNode, steps: Sequence[tuple[NamedNode, bool]], *, cap: int
    ) -> list[int]: ...

    def step_edges(
        self,
        entity: NamedNode,
        reads: Sequence[tuple[tuple[NamedNode, bool], int]],
        *,
        after: Sequence[int] | None = None,
    ) -> list[list[Triple]]: ...

    def relation_vocabulary(self) -> list[NamedNode] | None: ...

    def lookup_labels(self, texts: Sequence[str], *, limit: int = 1000) -> list[LabelRow]: ...

    def match_labels(self, pattern: str, *, limit: int = 1000) -> list[LabelRow]: ...

    def label_rows(self) -> Iterator[LabelRow]: ...

    def index_folder(self) -> FilePath | None:
        """Where files derived from this version of the data (a label index, the
        predicates) are kept for later processes; None where there is no such place."""
        ...


def cap_result(result: QueryResult, max_rows: int | None) -> QueryResult:
    """``result`` cut to ``max_rows`` rows or triples, marked ``truncated`` if cut."""
    if max_rows is None:
        return result
    if len(result.rows) > max_rows:
        result.rows = result.rows[:max_rows]
        result.truncated = True
    if len(result.triples) > max_rows:
        result.triples = result.triples[:max_rows]
        result.truncated = True
    return result


def template_graph(graph: KnowledgeGraph) -> TemplateGraph:
    """``graph`` as one that runs templates, as its capabilities declare; else a
    BadRequest naming what it lacks."""
    if not graph.capabilities.templates:
        raise BadRequest(
            f"source {graph.name!r} does not run the project's SPARQL templates",
            hint="use a local store or a SPARQL endpoint",
        )
    return cast(TemplateGraph, graph)

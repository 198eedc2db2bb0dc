"""What one round of the Knowledge Solver walk offers: the current entity's neighbours.

Each neighbour is an ``Option`` shown as ``tail (relation)``; a relation walked against
its direction reads inversely (the profile's inverse label, or ``(reversed)``). Hubs
(genres, years, countries) have thousands of neighbours, so ``cap`` keeps at most
``limit``: first the options that must stay (candidate answers, planned steps), then one
per relation path, then the rest by how well the relation path the option makes reads
like the question. What was cut, and why, is returned with the offer.

>>> from middleware.kg.backends.local import LocalStore
>>> from middleware.text.verbalize import Verbalizer
>>> kg = LocalStore(profile="metaqa")
>>> _ = kg.load_text("Heat|directed_by|Michael Mann\\nHeat|release_year|1995\\n", name="kb.txt")
>>> heat = kg.search("Heat")[0].iri
>>> read = neighbour_options(kg, heat, Verbalizer(kg), visited=set(), limit=10)
>>> [o.text for o in read.items], read.cut
(['Michael Mann (directed by)', '1995 (released in)'], False)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

from pyoxigraph import NamedNode

from middleware.kg.base import Hop, KnowledgeGraph
from middleware.kg.capped import Capped, neighbors_capped
from middleware.kg.terms import Term
from middleware.kg.walks import RelationPath
from middleware.llm.prompt_templates import one_line
from middleware.text.verbalize import Verbalizer

STOP_SUFFIX = " is the answer"


@dataclass(frozen=True)
class Option:
    """One thing the LLM may pick: a step over ``hop``, or (``hop`` None) stopping here."""

    text: str
    hop: Hop | None
    steps: RelationPath = ()  # the relation path the walk makes by taking it
    keep: str | None = None  # why the cap may not cut it: "planned", "choice"
    weight: float = 0.0  # a planned step's support

    @property
    def end(self) -> Term | None:
        return self.hop.end if self.hop is not None else None


def stop_option(name: str, steps: RelationPath = ()) -> Option:
    """The option that ends an open question's walk at the current entity, reached by
    the relation path ``steps``."""
    return Option(f"{one_line(name)}{STOP_SUFFIX}", None, steps, keep="stop")


def hop_options(hops: Iterable[Hop], verbalizer: Verbalizer) -> list[Option]:
    """``tail (relation)`` options for hops that all start at the same entity; the same
    tail over the same relation is offered once, equal texts are numbered."""
    listed = list(dict.fromkeys(hops))
    verbalizer.prepare(t for h in listed for t in (h.end, h.triple.predicate))
    options: list[Option] = []
    seen: dict[str, int] = {}
    pairs: set[tuple[Term, str]] = set()
    for hop in listed:
        reading = verbalizer.relation(hop.triple.predicate, forward=hop.forward)
        if (hop.end, reading) in pairs:
            continue
        pairs.add((hop.end, reading))
        text = f"{one_line(verbalizer.name(hop.end))} ({one_line(reading)})"
        seen[text] = seen.get(text, 0) + 1
        if seen[text] > 1:  # two entities share a label and a relation here
            text = f"{text} #{seen[text]}"
        options.append(Option(text, hop, ((hop.triple.predicate, hop.forward),)))
    return options


def neighbour_options(
    graph: KnowledgeGraph,
    entity: NamedNode,
    verbalizer: Verbalizer,
    *,
    visited: Collection[Term],
    limit: int,
    spread: bool = False,
) -> Capped[Option]:
    """Options for every neighbour of ``entity`` not yet visited (at most ``limit``
    triples read; ``cut`` when the entity has more). ``spread``: a hub's are read from
    each of its relations in turn (``kg/capped.py``)."""
    read = neighbors_capped(graph, entity, limit, spread=spread)
    hops = [Hop(t, forward=t.subject == entity) for t in read.items if verbalizer.keep(t)]
    options = hop_options([h for h in hops if h.end not in visited], verbalizer)
    return Capped(options, read.cut, read.cap, read.spread)


@dataclass
class Offer:
    """The options of one round and what the cap left out."""

    options: list[Option]
    total: int
    cut: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def texts(self) -> list[str]:
        return [o.text for o in self.options]


Scorer = Callable[[Sequence[RelationPath]], list[float]]
_PRIORITY = {"planned": 0, "choice": 1, "stop": 2, None: 2}


def cap(options: list[Option], limit: int, score: Scorer, *, relations: int = 0) -> Offer:
    """The options ranked: planned steps first (most support first), then candidate
    answers, then the rest (stopping included), each group by ``score`` of the relation
    path the option would make the walk. Apart from planned steps and stopping, only
    the options over the best ``relations`` relation paths stay (0: all). Beyond
    ``limit``, candidate answers and stopping stay, and the best supported planned
    steps up to the room they leave (at least one), then the best option of each
    relation path, then the next best; the rest is cut.

    >>> from pyoxigraph import NamedNode
    >>> wrote, directed = ((NamedNode("http://x/wrote"), True),), ((NamedNode("http://x/directed"), True),)
    >>> opts = [Option(f"F{i} (wrote)", None, wrote) for i in range(3)] + [Option("G (directed)", None, directed)]
    >>> offer = cap(opts, 2, lambda paths: [1.0 if p == directed else 0.0 for p in paths])
    >>> offer.texts, offer.cut
    (['G (directed)', 'F0 (wrote)'], 2)
    >>> cap(opts, 10, lambda paths: [1.0 if p == directed else 0.0 for p in paths], relations=1).texts
    ['G (directed)']
    """
    total = len(options)
    paths = list(dict.fromkeys(o.steps for o in options))
    ranked = dict(zip(paths, score(paths), strict=True)) if len(paths) > 1 else {}
    ordered = sorted(  # stable: graph order among equals
        options,
        key=lambda o: (_PRIORITY[o.keep], -o.weight, -ranked.get(o.steps, 0.0)),
    )
    notes: list[str] = []
    focus = [o for o in ordered if o.keep in (None, "choice")]
    best = sorted(dict.fromkeys(o.steps for o in focus), key=lambda p: -ranked.get(p, 0.0))
    if relations and len(best) > relations:
        allowed = set(best[:relations])
        ordered = [o for o in ordered if o.keep not in (None, "choice") or o.steps in allowed]
        notes.append(
            f"offered the neighbours over the {relations} relation paths that read most like "
            f"the question; {len(best) - relations} other relation paths left out"
        )
    fixed = [o for o in ordered if o.keep in ("choice", "stop")]
    # planned steps, best supported first, up to what the cap leaves beside the fixed
    every_planned = [o for o in ordered if o.keep == "planned"]
    planned = every_planned[: max(limit - len(fixed), 1)]
    kept = [o for o in ordered if o in planned or o in fixed]
    free = [o for o in ordered if o.keep is None]
    members = kept + free
    if len(members) > limit or len(planned) < len(every_planned):
        first: dict[RelationPath, Option] = {}
        for option in free:
            first.setdefault(option.steps, option)
        members = kept + list(first.values()) + [o for o in free if first[o.steps] is not o]
        members = members[: max(limit, len(kept))]
        notes.append(
            f"offered {len(members)} of {total} neighbours: {len(kept)} kept (the best "
            "supported planned steps, candidate answers, stopping), then the best of each "
            "relation path, then the next best by how well the path reads like the question"
        )
    chosen = {id(o) for o in members}
    offered = [o for o in ordered if id(o) in chosen]
    cut = total - len(offered)
    if notes:
        notes[-1] += f"; {cut} cut"
    return Offer(offered, total, cut, notes)

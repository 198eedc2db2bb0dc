"""One settings table per method: each method reads its own table and no other's.

A table is a frozen dataclass; its settings are named ``PREFIX_field`` in files,
``KGMW_PREFIX_FIELD`` in the environment and ``docs/settings.md``. Building a table
by hand checks the ranges too.

>>> RoKSettings(top_k=3).top_k
3
>>> RoKSettings(max_hops=5)
Traceback (most recent call last):
...
middleware.errors.ConfigError: setting 'rok_max_hops' from RoKSettings: 5 is out of range (1 to 3) (RoK: longest path (1-3 hops) searched between two key entities.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from middleware.config.fields import Setting, declared, setting


class MethodTable:
    """What every method table shares: its prefix and a range check on creation."""

    PREFIX: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""

    @classmethod
    def settings(cls) -> list[Setting]:
        return declared(cls, prefix=cls.PREFIX, area=cls.TITLE)

    def __post_init__(self) -> None:
        for entry in self.settings():
            entry.check(
                getattr(self, entry.name.removeprefix(self.PREFIX + "_")), type(self).__name__
            )


@dataclass(frozen=True)
class RoKSettings(MethodTable):
    """RoK; defaults follow the paper where it gives one."""

    PREFIX: ClassVar[str] = "rok"
    TITLE: ClassVar[str] = "Method rok"

    max_hops: int = setting(
        2, "RoK: longest path (1-3 hops) searched between two key entities.", minimum=1, maximum=3
    )
    top_k: int = setting(
        5,
        "RoK: main paths kept, taken by mean PageRank from the bucket with most key entities down.",
        minimum=1,
    )
    damping: float = setting(
        0.85, "RoK: PageRank damping factor (0 < d < 1).", minimum=0.01, maximum=0.99
    )
    neighbor_limit: int = setting(
        30,
        "RoK: most neighbour triples shown to the one filter call (spread over relations).",
        minimum=0,
    )
    max_entities: int = setting(
        8, "RoK: most linked key entities; pairs searched grow with its square.", minimum=1
    )
    # Not settings: per-call knobs for library users (None: the graph's own limit).
    paths_per_pair: int | None = None
    neighbors_per_entity: int | None = None


@dataclass(frozen=True)
class PseudoGraphSettings(MethodTable):
    """Pseudo-graph generation with atomic verification."""

    PREFIX: ClassVar[str] = "pg"
    TITLE: ClassVar[str] = "Method pg"

    threshold: float = setting(
        0.7,
        "Pseudo-graph: lowest mean cosine a ground-graph entity's matched triples may have.",
        minimum=-1.0,
        maximum=1.0,
    )
    top_matches: int = setting(
        10, "Pseudo-graph: base triples kept per pseudo-triple and source.", minimum=1
    )
    neighbors_per_entity: int = setting(
        100,
        "Pseudo-graph: most neighbour triples fetched per linked entity (in and out).",
        minimum=1,
        maximum=10_000,
    )
    link_candidates: int = setting(
        3,
        "Pseudo-graph: entities linked per name; the pruning picks among same-label ones.",
        minimum=1,
    )
    max_entities: int = setting(
        12,
        "Pseudo-graph: most linked entities per source whose neighbourhoods are fetched.",
        minimum=1,
    )
    min_ground: int = setting(
        3,
        "Pseudo-graph: when no entity reaches the threshold, keep this many best by mean "
        "cosine so verification still runs (0: skip verification, as published).",
        minimum=0,
        maximum=50,
    )
    question_query: bool = setting(
        True,
        "Pseudo-graph: also match the question itself against the base graph (helps when "
        "a small model's draft misses); off is the method as published.",
    )


@dataclass(frozen=True)
class QSMSettings(MethodTable):
    """The QSM baseline: the question matched against its entities' neighbour triples."""

    PREFIX: ClassVar[str] = "qsm"
    TITLE: ClassVar[str] = "Method qsm"

    top_k: int = setting(
        10, "QSM: base triples most similar to the question given to the LLM.", minimum=1
    )
    neighbors_per_entity: int = setting(
        100,
        "QSM: most neighbour triples fetched per linked entity (in and out).",
        minimum=1,
        maximum=10_000,
    )
    spread_hubs: bool = setting(
        True,
        "QSM: read a hub's neighbours (2,000 edges or more, in a store in this process) "
        "from each of its relations in turn, not as one sample of its edges.",
    )
    max_entities: int = setting(
        12, "QSM: most linked entities per source whose neighbourhoods are fetched.", minimum=1
    )


@dataclass(frozen=True)
class PlanSettings(MethodTable):
    """The relation-path planner and the ``plan`` method."""

    PREFIX: ClassVar[str] = "plan"
    TITLE: ClassVar[str] = "Method plan"

    memory: str | None = setting(
        None,
        "Plan: path memory file (default: path-memory.json in the store folder, or under "
        "the cache folder for an endpoint); without one the planner works zero-shot.",
    )
    neighbours: int = setting(
        15, "Plan: most similar learned questions whose relation paths vote.", minimum=1
    )
    span_entities: int = setting(
        3,
        "Plan: entities considered per linked span of the question (a short name may "
        "stand for several: 'uk'); the relation paths that exist from each decide.",
        minimum=1,
        maximum=10,
    )
    max_plans: int = setting(
        3, "Plan: relation paths executed per question, best first.", minimum=1, maximum=10
    )
    max_hops: int = setting(3, "Plan: longest relation path, in hops.", minimum=1, maximum=3)
    max_walks: int = setting(
        1000, "Plan: most walks (result rows) one executed relation path returns.", minimum=1
    )
    max_queries: int = setting(
        300,
        "Plan: most SPARQL queries spent growing zero-shot candidate paths per topic.",
        minimum=1,
    )
    mine_cap: int = setting(
        200,
        "Learning: most edges read each way around a question's topic or answer when "
        "mining paths (a hub's are sampled in the store's own order, the same each time).",
        minimum=10,
        maximum=5000,
    )
    learn_queries: int = setting(
        500,
        "Learning: most SPARQL queries mining one question may run; past it the question "
        "is skipped and counted.",
        minimum=10,
    )
    learn_seconds: float = setting(
        30.0,
        "Learning: most seconds mining one question may take; past it the question is "
        "skipped and counted.",
        minimum=1.0,
    )
    learn_workers: int = setting(
        2,
        "Learning: questions mined at once (processes over a store on disk, killed when "
        "a question runs past its budget; requests in flight over an endpoint).",
        minimum=1,
        maximum=64,
    )
    min_confidence: float = setting(
        0.0,
        "Plan: at or above this confidence the plan's entities are the answer (no LLM "
        "call); below it the LLM answers from the planned evidence (0: always the plan's, "
        "best with a small model).",
        minimum=0.0,
        maximum=1.0,
    )
    answer_items: int = setting(
        10, "Plan: most entity names in an answer taken from a plan.", minimum=1
    )
    phrase_weight: float = setting(
        0.25,
        "Plan: learned, the share of a path's support that comes from how well its phrase "
        "reads like the question (the rest is the neighbours' vote).",
        minimum=0.0,
        maximum=1.0,
    )
    backup_below: float = setting(
        0.5,
        "Plan: when the best learned plan's support is below this, the best zero-shot "
        "path is walked too, as one more plan (evidence only; 0: never).",
        minimum=0.0,
        maximum=1.0,
    )
    answer_types: bool = setting(
        True,
        "Plan: plans whose ends are of the kind the question asks for (a date, a number, "
        "an entity) come first.",
    )
    min_junction: float = setting(
        0.2,
        "Learning from the graph (kgmw learn --from-graph): a path of several steps is "
        "worded only where at least this share of the entities on either side of each "
        "junction are on both (fewer: a name collision, such as a genre that is also a "
        "film's title; 0: every path).",
        minimum=0.0,
        maximum=1.0,
    )
    relation_coverage: bool = setting(
        True,
        "Plan (zero-shot and generated memories): a path that leaves out a relation the "
        "question names outright counts for half as much, per relation left out.",
    )
    zero_shot_choose: bool = setting(
        False,
        "Plan: zero-shot or with a memory from the graph alone, let one LLM choose() "
        "among the plans walked.",
    )


@dataclass(frozen=True)
class SCSettings(MethodTable):
    """The self-consistency baseline: k sampled chain-of-thought answers, majority vote."""

    PREFIX: ClassVar[str] = "sc"
    TITLE: ClassVar[str] = "Method sc"

    samples: int = setting(
        5,
        "SC: chain-of-thought answers sampled (one LLM call each) before the majority vote.",
        minimum=1,
        maximum=20,
    )
    temperature: float = setting(
        0.7, "SC: sampling temperature of every chain of thought.", minimum=0.0, maximum=2.0
    )
    seed: int = setting(
        0,
        "SC: base seed; sample i (from 0) is drawn with seed sc_seed + i, so a run repeats.",
        minimum=0,
        maximum=999_999,
    )


@dataclass(frozen=True)
class KSLSettings(MethodTable):
    """Knowledge Solver (``ksl``, ``ksl+plan``): the LLM walks the graph hop by hop."""

    PREFIX: ClassVar[str] = "ksl"
    TITLE: ClassVar[str] = "Method ksl"

    rounds: int = setting(
        5,
        "KSL: most hops the LLM walks (one LLM call each) before the walk stops.",
        minimum=1,
        maximum=10,
    )
    start: str = setting(
        "best",
        "KSL: where the walk starts: the best linked question entity, or one drawn at "
        "random (seeded by ksl_seed and the question), as the paper does.",
        choices=("best", "random"),
    )
    seed: int = setting(0, "KSL: seed of the random start entity (ksl_start = random).")
    max_options: int = setting(
        20,
        "KSL: most neighbours offered in one round; beyond it the best of each relation "
        "path stay (candidate answers, planned steps and stopping always), then the next "
        "best by how well the path reads like the question, and the rest is cut.",
        minimum=2,
        maximum=200,
    )
    max_relations: int = setting(
        1,
        "KSL: the model picks among the neighbours over this many relation paths, those "
        "that read most like the question (candidate answers, planned steps and stopping "
        "are always offered; 0: every relation path).",
        minimum=0,
        maximum=100,
    )
    few_shot: str = setting(
        "auto",
        "KSL: whether each round's prompt carries the ksl_step prompt's worked examples: "
        "'on', 'off', or 'auto': off when the transformers backend loads a tuned adapter "
        "(llm_adapter), since `kgmw ksl-tune` trains on rounds without them, on otherwise.",
        choices=("auto", "on", "off"),
    )
    neighbor_limit: int = setting(
        2000,
        "KSL: most neighbour triples fetched for the current entity before ranking.",
        minimum=1,
        maximum=10_000,
    )
    spread_hubs: bool = setting(
        True,
        "KSL: read a hub's neighbours (2,000 edges or more, in a store in this process) "
        "from each of its relations in turn, not as one sample of its edges.",
    )
    max_hops: int = setting(
        2,
        "KSL, multiple choice: the subgraph is the nodes on paths of at most this many "
        "hops between question entities and choice entities.",
        minimum=1,
        maximum=3,
    )
    paths_per_pair: int = setting(
        100,
        "KSL, multiple choice: most paths fetched between one question entity and one choice.",
        minimum=1,
        maximum=10_000,
    )
    answer_items: int = setting(
        10,
        "KSL, open questions: most entities in the answer: the one picked from the walk, "
        "then the others the same relation path reaches from the start (1: the walk's only).",
        minimum=1,
        maximum=100,
    )
    answers_per_question: int = setting(
        3,
        "kgmw ksl-dataset: most gold answers per question that each give a training path.",
        minimum=1,
        maximum=50,
    )


@dataclass(frozen=True)
class ReachSettings(MethodTable):
    """The random-reachable baseline (``reach``), for multiple-choice questions."""

    PREFIX: ClassVar[str] = "reach"
    TITLE: ClassVar[str] = "Method reach"

    max_hops: int = setting(
        2,
        "Reach: a choice counts as reachable when a path of at most this many hops joins "
        "it to a question entity.",
        minimum=1,
        maximum=3,
    )
    paths_per_pair: int = setting(
        100, "Reach: most paths fetched between one question entity and one choice.", minimum=1
    )
    seed: int = setting(0, "Reach: seed of the draw (with the question's text).")


METHOD_TABLES: tuple[type[MethodTable], ...] = (
    RoKSettings,
    PseudoGraphSettings,
    QSMSettings,
    PlanSettings,
    SCSettings,
    KSLSettings,
    ReachSettings,
)

"""A path memory learned from the graph alone (``kgmw learn --from-graph``).

No question is given. Topics are sampled per predicate and side (the subjects and the
objects of each relation), so every kind of entity the graph holds is reached even
without classes. From each topic the relation paths that exist are grown, 1 to
``max_hops`` steps, bounded (``candidates.grow``); the census counts, per relation
path, the sampled topics it leaves. Each path found is then worded as questions from
its relations' labels (``wordings.py``) and stored as generated memory entries, one per
wording, which the planner's vote reads exactly like learned questions.

A longer path is kept only where each of its junctions is one the graph's entities
commonly make (``junctions.py``): at least ``min_junction`` of the entities a step
reaches go on along the next, or of those the next leaves from are reached by it.

The census is saved beside the memory as it goes (``<memory>.census.json``); an
interrupted run, or one stopped by its time, resumes from it while the source, its
data and the sampling are unchanged.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pyoxigraph import NamedNode

from middleware.errors import BadRequest, ConfigError, EndpointError
from middleware.kg.base import KnowledgeGraph
from middleware.kg.identity import source_identity
from middleware.planning.answer_types import ends_kind
from middleware.planning.candidates import grow
from middleware.planning.junctions import coherent_paths
from middleware.planning.memory import MemoryEntry, PathMemory, fingerprint
from middleware.planning.mining import MinedPath
from middleware.planning.relpaths import from_key, path_key
from middleware.planning.wordings import readings, wordings
from middleware.support.progress_bar import progress_bar
from middleware.text.embeddings.encoders import Encoder
from middleware.text.verbalize import Verbalizer

GENERATED = "graph:"  # the key prefix of generated entries
SPREAD = 2000  # a role's sample starts at a seeded offset below this
DATED_SAMPLE = 20  # ends read to tell whether a path ends at dates
LABEL_PROBE = 200  # sampled topics whose labels are looked up at once


@dataclass(frozen=True)
class GraphLessons:
    """How a memory is learned from the graph: topics per predicate side, hops, the
    queries one topic may spend, the most relation paths kept, the time allowed."""

    per_role: int = 20
    max_hops: int = 3
    topic_queries: int = 60
    max_paths: int = 3000
    min_share: float = 0.02
    min_junction: float = 0.2
    seconds: float = 1800.0
    seed: int = 0


@dataclass
class Census:
    """Relation paths found from the sampled topics: per path key, how many topics
    have it and one of them; the topics sampled and how many were grown so far."""

    settings: dict[str, Any]
    fingerprint: dict[str, Any]
    topics: list[str] = field(default_factory=list)
    done: int = 0
    paths: dict[str, list[Any]] = field(default_factory=dict)  # key: [topics, example]
    stopped: str = ""  # why growing stopped early, if it did

    def save(self, where: Path) -> None:
        tmp = where.with_name(where.name + ".tmp")
        tmp.write_text(json.dumps(asdict(self)), encoding="utf-8")
        os.replace(tmp, where)

    @classmethod
    def resume(cls, where: Path, settings: dict[str, Any], now: dict[str, Any]) -> Census | None:
        """The census saved at ``where`` if it was taken with these settings from the
        graph as it is now; None otherwise (it is then taken again)."""
        try:
            data = json.loads(where.read_text(encoding="utf-8"))
            census = cls(**data)
        except (OSError, ValueError, TypeError):
            return None
        if census.settings != settings or census.fingerprint != now:
            return None
        return census


def any_labeled(graph: KnowledgeGraph, topics: list[NamedNode]) -> bool:
    """Whether any of ``topics`` has a label (looked up ``LABEL_PROBE`` at a time)."""
    return any(
        graph.labels(topics[start : start + LABEL_PROBE])
        for start in range(0, len(topics), LABEL_PROBE)
    )


def census_path(memory_path: Path) -> Path:
    return memory_path.with_name(memory_path.name + ".census.json")


def sample_topics(graph: KnowledgeGraph, config: GraphLessons) -> list[NamedNode]:
    """Up to ``per_role`` subjects and objects of each relation predicate, from a
    seeded offset (the start when the predicate has fewer uses), in a seeded shuffled
    order; label predicates are not relations. A graph with more predicates than can
    be probed is a BadRequest; one with no relation gives no topics."""
    predicates = graph.relation_vocabulary()
    if predicates is None:
        raise BadRequest(
            "this graph has too many predicates to sample topics from each",
            hint="learn from questions with known answers instead (kgmw learn --dataset)",
        )
    rng = random.Random(config.seed)
    found: dict[NamedNode, None] = {}
    for predicate in predicates:
        for subjects in (True, False):
            offset = rng.randrange(SPREAD)
            sample = graph.sample_ends(
                predicate, subjects=subjects, limit=config.per_role, offset=offset
            )
            if not sample:
                sample = graph.sample_ends(predicate, subjects=subjects, limit=config.per_role)
            found.update(dict.fromkeys(sample))
    topics = list(found)
    rng.shuffle(topics)  # a run stopped by its time has grown topics of every relation
    return topics


def take_census(
    graph: KnowledgeGraph,
    census: Census,
    config: GraphLessons,
    *,
    where: Path,
    progress: bool,
    save_every: int = 50,
) -> None:
    """Grow the relation paths of the census's topics not yet done, saving every
    ``save_every`` topics and when interrupted; stops (noted) past ``seconds``."""
    started = time.monotonic()
    todo = census.topics[census.done :]
    bar = progress_bar(
        total=len(census.topics),
        initial=census.done,
        unit="topic",
        disable=not progress,
        dynamic_ncols=True,
    )
    try:
        with bar:
            for topic in todo:
                if time.monotonic() - started > config.seconds:
                    census.stopped = (
                        f"stopped after {config.seconds:g} s with {census.done} of "
                        f"{len(census.topics)} topics grown"
                    )
                    break
                node = NamedNode(topic)
                paths = grow(
                    graph, node, max_hops=config.max_hops, max_queries=config.topic_queries
                )
                for path in paths:
                    seen = census.paths.setdefault(path_key(path), [0, topic])
                    seen[0] += 1
                census.done += 1
                bar.set_postfix_str(f"{len(census.paths)} paths", refresh=False)
                bar.update()
                if census.done % save_every == 0:
                    census.save(where)
    finally:
        census.save(where)


def dated(graph: KnowledgeGraph, topic: str, key: str) -> bool:
    """True when most of the ends a path reaches from ``topic`` are dates (the planner's
    own reading of kinds, ``answer_types.py``)."""
    walks = graph.follow(NamedNode(topic), from_key(key), limit=DATED_SAMPLE)
    ends = list(dict.fromkeys(w.nodes[-1] for w in walks))
    names = graph.labels(ends)
    return ends_kind([names.get(e, "") for e in ends], ends) == "date"


@dataclass
class GraphReport:
    """What a run learned: topics sampled and grown, paths found and kept, entries."""

    topics: int = 0
    grown: int = 0
    paths: int = 0
    common: int = 0  # paths of one step, and longer ones at least min_share of topics have
    incoherent: int = 0  # of those, longer paths left out: a junction few entities make
    kept_paths: int = 0
    entries: int = 0
    resumed: bool = False
    warnings: list[str] = field(default_factory=list)


def generated_entries(
    graph: KnowledgeGraph,
    verbalizer: Verbalizer,
    census: Census,
    config: GraphLessons,
    report: GraphReport | None = None,
) -> list[MemoryEntry]:
    """One entry per wording of each path in the census: every 1-hop path (a relation
    few entities have is still asked about), then the longer paths at least
    ``min_share`` of the topics have and whose junctions are coherent, the most common
    first; ``max_paths`` paths. ``report`` counts the paths left out as incoherent."""
    least = max(1, math.ceil(config.min_share * census.done))
    common = [
        (key, seen)
        for key, seen in census.paths.items()
        if seen[0] >= least or len(from_key(key)) == 1
    ]
    try:
        paths = coherent_paths(graph, [from_key(k) for k, _ in common], least=config.min_junction)
    except EndpointError as err:  # the census is saved: learning goes on without the check
        paths = [from_key(k) for k, _ in common]
        if report is not None:
            report.warnings.append(
                f"the junctions of the relation paths could not be read ({err}); every "
                "path is kept, name collisions too (plan_min_junction)"
            )
    coherent = {path_key(p) for p in paths}
    kept = [(key, seen) for key, seen in common if key in coherent]
    if report is not None:
        report.common, report.incoherent = len(common), len(common) - len(kept)
    ranked = sorted(kept, key=lambda kv: (len(from_key(kv[0])) > 1, -kv[1][0], len(kv[0]), kv[0]))
    entries = []
    for key, (count, example) in ranked[: config.max_paths]:
        path = from_key(key)
        texts = wordings(readings(path, verbalizer), dated=dated(graph, example, key))
        mined = MinedPath(key, example, int(count), 0)
        entries += [
            MemoryEntry(f"{GENERATED}{key}#{i}", text, [mined], str(len(path)), generated=True)
            for i, text in enumerate(texts)
        ]
    return entries


def learn_from_graph(
    graph: KnowledgeGraph,
    memory: PathMemory,
    *,
    path: Path,
    verbalizer: Verbalizer,
    encoder: Encoder,
    config: GraphLessons,
    progress: bool = True,
) -> GraphReport:
    """Replace ``memory``'s generated entries with those the graph gives now (learned
    entries are kept), and save it at ``path``. A graph whose entities have no labels
    is a ConfigError: the planner could not link a question to them."""
    report = GraphReport()
    where = census_path(path)
    settings = census_settings(graph, config)
    now = fingerprint(graph)
    census = Census.resume(where, settings, now)
    if census is None:
        topics = sample_topics(graph, config)
        if topics and not any_labeled(graph, topics):
            raise ConfigError(
                f"none of the {len(topics)} entities sampled from the graph "
                f"{graph.name!r} has a label, so no question could be linked to them",
                hint="load labels with the data (rdfs:label, or the profile's "
                "label_predicates), or choose the profile that names them (--profile)",
            )
        census = Census(settings, now, [t.value for t in topics])
    else:
        report.resumed = True
        census.stopped = ""
    take_census(graph, census, config, where=where, progress=progress)
    report.topics, report.grown, report.paths = len(census.topics), census.done, len(census.paths)
    if census.stopped:
        report.warnings.append(
            census.stopped + "; the memory holds the paths found so far, and the same "
            "command continues the rest (give it more --minutes)"
        )
    entries = generated_entries(graph, verbalizer, census, config, report)
    report.kept_paths = len({e.paths[0].key for e in entries})
    report.entries = len(entries)
    if not entries:
        report.warnings.append(
            "no relation path leaves the sampled topics: the memory has no generated entries"
        )
    kept = {k: e for k, e in memory.entries.items() if not e.generated}
    memory.entries = kept | {e.key: e for e in entries}
    if kept and memory.fingerprint and memory.fingerprint != now:
        # the learned entries were mined on the graph as it was: they stay stale until
        # `kgmw learn --dataset` mines them again
        report.warnings.append(
            f"{len(kept)} learned entries were mined before the graph was loaded again; "
            "run kgmw learn --dataset again to mine them anew"
        )
    elif not memory.fingerprint or not kept:
        memory.fingerprint = now
    memory.worded_fingerprint = now
    memory.learned_from.append({"from_graph": {**asdict(config), "entries": len(entries)}})
    texts = [e.question for e in memory.entries.values()]
    memory.vectors = encoder.encode(texts) if texts else None  # nothing to encode: no warning
    memory.save(path)
    if not census.stopped:  # a run stopped by its time keeps its census to continue
        where.unlink(missing_ok=True)
    return report


def census_settings(graph: KnowledgeGraph, config: GraphLessons) -> dict[str, Any]:
    """What a census depends on: the source and the sampling (not the time allowed,
    nor how many of its paths a memory keeps)."""
    return {
        "source": source_identity(graph),
        "per_role": config.per_role,
        "max_hops": config.max_hops,
        "topic_queries": config.topic_queries,
        "seed": config.seed,
    }

"""The planner: a question's best relation paths from its topic, executed as SPARQL.

1. Link the question's spans; each linked span is a topic candidate, and the question
   is read with that span masked.
2. **Learned** (a path memory is given): the masked question's nearest learned
   questions vote for their relation paths, weighted by similarity; a path's share of
   the vote is its support. **Zero-shot** (no memory): the relation paths that exist
   from the topic are grown hop by hop and ranked by the similarity of their phrase to
   the masked question, plus a per-length prior; support is a softmax over them.
3. The best paths are walked from their topic (``follow``); those that reach nothing
   are skipped, up to ``max_plans`` that do. Their walks are the evidence; the best
   plan's support is the confidence.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Literal

from pyoxigraph import NamedNode

from middleware.config.methods import PlanSettings
from middleware.kg.base import KnowledgeGraph, Path
from middleware.kg.walks import RelationPath
from middleware.planning.candidates import grow
from middleware.planning.masking import mask
from middleware.planning.memory import PathMemory
from middleware.planning.relpaths import describe, from_key, path_key, phrase
from middleware.text.embeddings.encoders import Encoder, normalize
from middleware.text.embeddings.index import VectorIndex
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

Mode = Literal["learned", "zero-shot", "none"]
# Zero-shot: added to a path's similarity per hop count (tuned on MetaQA dev), and the
# softmax temperature that turns scores into support.
LENGTH_PRIOR = {1: 0.0, 2: -0.06, 3: -0.12}
TEMPERATURE = 0.05
# Learned: a neighbour's vote is its cosine to this power, so near-paraphrases dominate.
VOTE_POWER = 16.0


@dataclass(frozen=True)
class Candidate:
    """A relation path from a topic with its support (vote share or softmax score)."""

    topic: NamedNode
    span: str
    path: RelationPath
    support: float


@dataclass(frozen=True)
class Plan:
    """A candidate that was walked and reached something."""

    candidate: Candidate
    walks: list[Path]
    description: str
    backup: bool = False  # the zero-shot plan added after unsure learned ones

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.candidate.topic.value,
            "path": path_key(self.candidate.path),
            "reads": self.description,
            "support": round(self.candidate.support, 4),
            "walks": len(self.walks),
            "backup": self.backup,
        }


@dataclass
class Planning:
    """What the planner did: its mode, the plans that reached something, and why."""

    mode: Mode
    plans: list[Plan] = field(default_factory=list)
    considered: list[Candidate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def confidence(self) -> float:
        return self.plans[0].candidate.support if self.plans else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "plans": [p.to_dict() for p in self.plans],
            "considered": len(self.considered),
            "confidence": round(self.confidence, 4),
            "notes": list(self.notes),
        }


class Planner:
    """Plans over one graph, with a path memory (learned) or without (zero-shot)."""

    def __init__(
        self,
        graph: KnowledgeGraph,
        encoder: Encoder,
        *,
        linker: EntityLinker,
        verbalizer: Verbalizer,
        config: PlanSettings | None = None,
        memory: PathMemory | None = None,
    ) -> None:
        self.graph = graph
        self.encoder = encoder
        self.linker = linker
        self.verbalizer = verbalizer
        self.config = config or PlanSettings()
        self.memory = memory if memory is not None and memory.entries else None
        self._index: VectorIndex[int] | None = None

    # -- the memory as an index ---------------------------------------------------------
    def index(self) -> VectorIndex[int]:
        """The memory's question vectors (encoded once if the file had none)."""
        if self._index is None:
            assert self.memory is not None
            entries = list(self.memory.entries.values())
            if self.memory.vectors is None or len(self.memory.vectors) != len(entries):
                self.memory.vectors = self.encoder.encode([e.question for e in entries])
            vectors = normalize(self.memory.vectors)
            self._index = VectorIndex(dim=vectors.shape[1])
            self._index.add(vectors, list(range(len(entries))))
        return self._index

    # -- planning -----------------------------------------------------------------------
    def plan(self, question: str) -> Planning:
        spans = [(span, entity.iri) for span, entity in self.linker.spans(question)]
        mode: Mode = "learned" if self.memory is not None else "zero-shot"
        if not spans:
            return Planning(
                "none", notes=["no span of the question links to an entity of the graph"]
            )
        masked = [mask(question, span) for span, _ in spans]
        vectors = self.encoder.encode(masked)
        if self.memory is not None:
            candidates = self._vote(spans, vectors)
        else:
            candidates = self._rank(spans, vectors)
        planning = Planning(mode, considered=candidates)
        if not candidates:
            planning.notes.append(f"no {mode} relation path from the question's entities")
        self._execute(planning)
        if mode == "learned" and planning.confidence < self.config.backup_below:
            self._backup(planning, spans, vectors)
        return planning

    def _backup(self, planning: Planning, spans: list[tuple[str, NamedNode]], vectors: Any) -> None:
        """One zero-shot plan after the learned ones, when those are unsure: its walks
        add to the evidence, and it comes last, so a learned plan that reached something
        still gives the answer; with none, the backup plan does."""
        taken = {(p.candidate.topic, p.candidate.path) for p in planning.plans}
        for tried, candidate in enumerate(self._rank(spans, vectors)):
            if tried >= 2 * self.config.max_plans:
                break
            if (candidate.topic, candidate.path) in taken:
                continue
            walks = self.graph.follow(candidate.topic, candidate.path, limit=self.config.max_walks)
            if walks:
                # below every learned plan; alone, half its own zero-shot support
                support = min(candidate.support, planning.confidence or 1.0) / 2
                backup = Candidate(candidate.topic, candidate.span, candidate.path, support)
                reads = describe(candidate.path, self.verbalizer)
                planning.plans.append(Plan(backup, walks, reads, backup=True))
                planning.notes.append(f"zero-shot backup plan: {reads}")
                return

    def _vote(self, spans: list[tuple[str, NamedNode]], vectors: Any) -> list[Candidate]:
        assert self.memory is not None
        entries = list(self.memory.entries.values())
        found: list[Candidate] = []
        hits_per_span = self.index().search(vectors, k=self.config.neighbours)
        for (span, topic), hits in zip(spans, hits_per_span, strict=True):
            available = set(self.graph.relation_steps([topic]))  # a path must start here
            votes: dict[str, float] = defaultdict(float)
            weights = [max(h.score, 0.0) ** VOTE_POWER for h in hits]
            total = sum(weights) or 1.0
            for hit, weight in zip(hits, weights, strict=True):
                paths = entries[hit.item].paths
                for mined in paths:
                    votes[mined.key] += weight / len(paths)
            for key, vote in votes.items():
                path = from_key(key)
                if len(path) <= self.config.max_hops and path[0] in available:
                    found.append(Candidate(topic, span, path, vote / total))
        return sorted(found, key=lambda c: (-c.support, len(c.path), -len(c.span)))

    def _rank(self, spans: list[tuple[str, NamedNode]], vectors: Any) -> list[Candidate]:
        found: list[Candidate] = []
        for (span, topic), vector in zip(spans, vectors, strict=True):
            paths = grow(
                self.graph,
                topic,
                max_hops=self.config.max_hops,
                max_queries=self.config.max_queries,
            )
            if not paths:
                continue
            phrases = [phrase(p, self.verbalizer) for p in paths]
            similarity = normalize(self.encoder.encode(phrases)) @ normalize(vector)[0]
            scores = [
                float(s) + LENGTH_PRIOR.get(len(p), 0.0)
                for s, p in zip(similarity, paths, strict=True)
            ]
            top = max(scores)
            weights = [math.exp((s - top) / TEMPERATURE) for s in scores]
            total = sum(weights)
            found += [
                Candidate(topic, span, p, w / total) for p, w in zip(paths, weights, strict=True)
            ]
        return sorted(found, key=lambda c: (-c.support, len(c.path), -len(c.span)))

    def _execute(self, planning: Planning) -> None:
        for tried, candidate in enumerate(planning.considered):
            if len(planning.plans) >= self.config.max_plans or tried >= 4 * self.config.max_plans:
                break
            walks = self.graph.follow(candidate.topic, candidate.path, limit=self.config.max_walks)
            if walks:
                reads = describe(candidate.path, self.verbalizer)
                planning.plans.append(Plan(candidate, walks, reads))
            else:
                planning.notes.append(
                    f"{describe(candidate.path, self.verbalizer)} reaches nothing from "
                    f"{candidate.span!r}"
                )
        if planning.considered and not planning.plans:
            planning.notes.append("no planned relation path reaches anything")

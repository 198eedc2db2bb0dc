"""The planner: a question's best relation paths from its topic, executed as SPARQL.

1. Link the question's spans; each linked span is a topic candidate (learned: with up
   to ``span_entities`` entities, for short names such as "uk"), and the question is
   read with that span masked.
2. **Learned** (a path memory is given): the masked question's nearest learned
   questions vote for their relation paths, weighted by similarity; a path's share of
   the vote is its support; a span's path is taken from the best-linked of its
   entities that has it. A span that many learned questions contain unmasked is their
   wording ("state", "president"), so its paths come after the other spans'.
   **Zero-shot** (no memory): the relation paths that exist from the topic are grown
   hop by hop and ranked by how well they read as the masked question
   (``path_reading.py``: each asked as short questions, a prior per hop count, paths
   out and back for questions about the topic's peers); support is a softmax over
   them. How much better a path the topic lacks but its peers hold reads is kept
   (``unheld``, ``peer_paths.py``): the answer is then likely a detour.
3. The best paths are walked from their topic (``follow``); those that reach nothing
   are skipped, up to ``max_plans`` that do. Their walks are the evidence; the best
   plan's support is the confidence, and its entities are the answers, those that
   other plans reach too first.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from pyoxigraph import NamedNode

from middleware.config.methods import PlanSettings
from middleware.kg.base import SORT_WINDOW, KnowledgeGraph, Path
from middleware.kg.capped import cut_note, follow_capped
from middleware.planning.answer_types import asked_kind, ends_kind
from middleware.planning.candidates import grow
from middleware.planning.masking import MASK, mask, mask_all, topic_spans, without_kind
from middleware.planning.memory import PathMemory
from middleware.planning.mentions import RelationMentions
from middleware.planning.path_reading import PathReading, asks_for_peers
from middleware.planning.peer_paths import peer_steps
from middleware.planning.plans import Candidate, Mode, Plan, Planning
from middleware.planning.question_words import QuestionWords
from middleware.planning.relpaths import describe, ends, from_key, path_key
from middleware.planning.votes import votes_of
from middleware.text.embeddings.encoders import Encoder, normalize
from middleware.text.embeddings.index import VectorIndex
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer

# The softmax temperature that turns scores into support: zero-shot path scores
# (path_reading.py) and the vote's phrase blend.
TEMPERATURE = 0.05
# Learned: paths of the next (WIDEN - 1) x neighbours come after every voted path, to fill
# the plans left when the nearest neighbours' paths run out (recall, never the top plan).
WIDEN = 4
WIDER_SCALE = 1e-3
KIND_SAMPLE = 20  # ends whose labels tell a plan's kind


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
        worded = [e.generated for e in self.memory.entries.values()] if self.memory else []
        self._generated = any(worded)
        self._generated_only = bool(worded) and all(worded)
        self._index: VectorIndex[int] | None = None
        self._words: QuestionWords | None = None
        self.mentions = RelationMentions(encoder, verbalizer)
        self.reading = PathReading(encoder, verbalizer)

    # -- the memory as an index ---------------------------------------------------------
    def index(self) -> VectorIndex[int]:
        """The memory's question vectors (encoded once if the file had none)."""
        if self._index is None:
            assert self.memory is not None
            entries = list(self.memory.entries.values())
            if self.memory.vectors is None or len(self.memory.vectors) != len(entries):
                self.memory.vectors = self.encoder.encode([e.question for e in entries])
            vectors = normalize(self.memory.vectors)
            index: VectorIndex[int] = VectorIndex(dim=vectors.shape[1])
            index.add(vectors, list(range(len(entries))))
            self._index = index  # published once full: another thread may read it now
        return self._index

    def question_words(self) -> QuestionWords:
        """The wording of the memory's questions (their topics masked)."""
        if self._words is None:
            assert self.memory is not None
            questions = (e.question for e in self.memory.entries.values())
            self._words = QuestionWords(questions, mask=MASK)
        return self._words

    # -- planning -----------------------------------------------------------------------
    def plan(self, question: str) -> Planning:
        mode: Mode = "zero-shot"
        if self.memory is not None:  # "generated": every entry was worded from the graph
            mode = "generated" if self._generated_only else "learned"
        # Learned votes say which relation a span's entity must have, so several
        # entities per span can be tried; zero-shot similarity cannot tell them apart.
        per_span = self.config.span_entities if mode != "zero-shot" else 1
        spans = topic_spans(self.linker, question, per_span=per_span)
        if not spans:
            return Planning(
                "none", notes=["no span of the question links to an entity of the graph"]
            )
        masked = [mask(question, span) for span, _ in spans]
        # not "The Sun Also Rises", whichever span names it
        peers = asks_for_peers(mask_all(question, [span for span, _ in spans]))
        if self._generated:
            masked = [without_kind(m) for m in masked]
        vectors = self.encoder.encode(masked)
        unheld: dict[tuple[str, str], float] = {}
        steps: dict[tuple[str, str], tuple[set[NamedNode], set[NamedNode]]] = {}
        worded: set[str] = set()
        if self.memory is not None:
            candidates = self._vote(spans, vectors, unheld, worded)
        else:
            candidates = self._rank(spans, vectors, peers, unheld=unheld, steps=steps)
        if self.config.relation_coverage:  # not for the paths users' questions chose
            candidates = self._cover(question, candidates, mode == "learned", worded)
        planning = Planning(mode, considered=candidates, unheld=unheld, worded=worded)
        if not candidates:
            planning.notes.append(f"no {mode} relation path from the question's entities")
        self._execute(planning, [c for c in candidates if not c.wide])
        if mode != "zero-shot" and planning.confidence < self.config.backup_below:
            # zero-shot growth is the costly part: from the topics the vote liked best,
            # else from the best entity of each span
            liked = {(c.span, c.topic) for c in candidates[: self.config.max_plans]}
            best = [i for i, pair in enumerate(spans) if pair in liked]
            if not best:
                best = [i for i, (span, _) in enumerate(spans) if i == 0 or spans[i - 1][0] != span]
            self._backup(planning, [spans[i] for i in best], vectors[best], peers)
        self._execute(planning, [c for c in candidates if c.wide])
        if self.config.answer_types:
            self._type(planning, question, candidates)
        if candidates and not planning.plans:
            planning.notes.append("no planned relation path reaches anything")
        if mode == "zero-shot" and planning.plans:
            chosen = planning.plans[0].candidate
            key = (chosen.span, chosen.topic.value)
            held, peer_held = steps.get(key, (set(), set()))
            masked_chosen = mask(question, chosen.span)
            if self.mentions.names_lacking(masked_chosen, held, peer_held, chosen.path):
                planning.unheld[key] = 1.0  # it names a relation the topic lacks: a detour
        return planning

    def _cover(
        self, question: str, candidates: list[Candidate], learned: bool, worded: set[str]
    ) -> list[Candidate]:
        """Candidates, their support times their coverage of the relations the
        question names (``mentions.py``), best first; in a ``learned`` memory, only
        those that generated entries chose (``worded``)."""
        if learned and not worded:
            return candidates
        predicates = list(dict.fromkeys(p for c in candidates for p, _ in c.path))
        named = {
            span: self.mentions.named(mask(question, span), predicates)
            for span in dict.fromkeys(c.span for c in candidates)
        }
        covered = [
            replace(c, support=c.support * self.mentions.coverage(c.path, named[c.span]))
            if not learned or path_key(c.path) in worded
            else c
            for c in candidates
        ]
        return self._ordered(covered)

    def _type(self, planning: Planning, question: str, candidates: list[Candidate]) -> None:
        """Plans whose ends are of the kind the question asks for come first; when no
        walked plan's are, up to ``2 × max_plans`` more candidates are walked for one.
        The question is read without the names of its linked spans ("When the Game
        Stands Tall"). A plan that reaches only literals answers nothing (answers are
        entities), so it never counts as matching."""
        if not planning.plans:
            return
        unnamed = mask_all(question, [c.span for c in planning.considered])
        planning.asked = asked = asked_kind(unnamed)
        if asked is None:
            return

        def fits(plan: Plan) -> bool:
            return plan.kind == asked and bool(ends(plan.walks))

        plans = [replace(p, kind=self._ends_kind(p)) for p in planning.plans]
        if not any(fits(p) for p in plans):
            walked = {(p.candidate.topic, p.candidate.path) for p in plans}
            more = [c for c in candidates if (c.topic, c.path) not in walked]
            for candidate in more[: 2 * self.config.max_plans]:
                walks = self._walks(planning, candidate)
                if not walks:
                    continue
                reads = describe(candidate.path, self.verbalizer)
                worded = path_key(candidate.path) in planning.worded
                plan = Plan(candidate, walks, reads, generated=worded)
                if fits(plan := replace(plan, kind=self._ends_kind(plan))):
                    plans.append(plan)
                    break
        planning.plans = sorted(plans, key=lambda p: not fits(p))  # stable
        if planning.plans[0] is not plans[0]:
            planning.notes.append(
                f"the question asks for a {asked}: {planning.plans[0].description} comes "
                f"before {plans[0].description}, whose ends are of kind {plans[0].kind}"
            )

    def _ends_kind(self, plan: Plan) -> str:
        """The kind of the plan's ends (literals too: a date is often one)."""
        reached = list(dict.fromkeys(w.nodes[-1] for w in plan.walks))[:KIND_SAMPLE]
        names = self.graph.labels(reached)
        return ends_kind([names.get(t, "") for t in reached], reached)

    def _backup(
        self,
        planning: Planning,
        spans: list[tuple[str, NamedNode]],
        vectors: Any,
        peers: bool,
    ) -> None:
        """One zero-shot plan after the learned ones, when those are unsure: its walks
        add to the evidence, and it comes last, so a learned plan that reached something
        still gives the answer; with none, the backup plan does."""
        taken = {(p.candidate.topic, p.candidate.path) for p in planning.plans}
        for tried, candidate in enumerate(self._rank(spans, vectors, peers)):
            if tried >= 2 * self.config.max_plans:
                break
            if (candidate.topic, candidate.path) in taken:
                continue
            walks = self._walks(planning, candidate)
            if walks:
                # below every learned plan; alone, half its own zero-shot support
                support = min(candidate.support, planning.confidence or 1.0) / 2
                backup = Candidate(candidate.topic, candidate.span, candidate.path, support)
                reads = describe(candidate.path, self.verbalizer)
                planning.plans.append(Plan(backup, walks, reads, backup=True))
                planning.notes.append(f"zero-shot backup plan: {reads}")
                return

    def _vote(
        self,
        spans: list[tuple[str, NamedNode]],
        vectors: Any,
        unheld: dict[tuple[str, str], float],
        worded: set[str],
    ) -> list[Candidate]:
        """The voted candidates; ``unheld`` gets each (span, topic)'s share of the
        nearest neighbours' vote for paths that do not start at the topic, ``worded``
        the paths that generated entries chose."""
        assert self.memory is not None
        entries = list(self.memory.entries.values())
        found: list[Candidate] = []
        k = self.config.neighbours
        hits_per_span = self.index().search(vectors, k=k * WIDEN)
        voted: set[tuple[str, str]] = set()  # a span's path, from its best entity only
        for (span, topic), hits, vector in zip(spans, hits_per_span, vectors, strict=True):
            available = set(self.graph.relation_steps([topic]))  # a path must start here
            nearest = votes_of(hits[:k], entries, worded)
            lacking = [s for key, s in nearest.items() if from_key(key)[0] not in available]
            unheld[(span, topic.value)] = float(sum(lacking))
            usable = []
            # the nearest neighbours vote; the wider ring only adds paths after theirs
            for votes, scale in (
                (nearest, 1.0),
                (votes_of(hits[k:], entries, worded), WIDER_SCALE),
            ):
                found_here = []
                for key, share in votes.items():
                    path = from_key(key)
                    ok = len(path) <= self.config.max_hops and path[0] in available
                    if ok and (span, key) not in voted:
                        voted.add((span, key))
                        wide = scale != 1.0
                        found_here.append(Candidate(topic, span, path, share * scale, wide))
                usable += self._blend(found_here, vector) if scale == 1.0 else found_here
            found += usable
        return self._ordered(found)

    def _ordered(self, candidates: list[Candidate]) -> list[Candidate]:
        """Best supported first; with a memory, a span its questions often contain is
        their wording ("what state is NE in"): its paths come after the other spans'."""
        distinct = {c.span for c in candidates}
        common = dict.fromkeys(distinct, False)
        if self.memory is not None and len(distinct) > 1:
            common = {span: self.question_words().common(span) for span in distinct}
        return sorted(
            candidates, key=lambda c: (common[c.span], -c.support, len(c.path), -len(c.span))
        )

    def _blend(self, candidates: list[Candidate], vector: Any) -> list[Candidate]:
        """A span's voted paths, their support mixed with how well each path's phrase
        reads like the masked question (``phrase_weight``): neighbours that asked for
        something else outvote a path the question names ("buried": place of burial)."""
        weight = self.config.phrase_weight
        if weight <= 0 or len(candidates) < 2:
            return candidates
        scores = self.reading.phrase_scores([c.path for c in candidates], vector).tolist()
        top = max(scores)
        shares = [math.exp((s - top) / TEMPERATURE) for s in scores]
        total = sum(shares)
        return [
            Candidate(c.topic, c.span, c.path, (1 - weight) * c.support + weight * share / total)
            for c, share in zip(candidates, shares, strict=True)
        ]

    def _rank(
        self,
        spans: list[tuple[str, NamedNode]],
        vectors: Any,
        peers: bool,
        unheld: dict[tuple[str, str], float] | None = None,
        steps: dict[tuple[str, str], tuple[set[NamedNode], set[NamedNode]]] | None = None,
    ) -> list[Candidate]:
        """Zero-shot candidates: each span's paths, scored by ``path_reading.py`` against
        its masked question (``vectors``); the question may ask for the topic's
        ``peers``. ``unheld``, where given, gets per (span, topic IRI) how much better
        a path the topic lacks but its peers hold reads (``PathReading.unheld``);
        ``steps`` the relations the topic holds and those its peers hold (for
        ``RelationMentions.names_lacking``)."""
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
            grown, paths = paths, self.reading.shortlist(paths, vector, peers=peers)
            scores = self.reading.scores(paths, vector, peers=peers)
            top = max(scores)
            if unheld is not None:
                unheld[(span, topic.value)] = self.reading.unheld(grown, top, vector, peers=peers)
            if steps is not None:
                held = {p for path in grown if len(path) == 1 for p, _ in path}
                peer_held = {p for p, _ in peer_steps(grown, same_relation=True)}
                steps[(span, topic.value)] = (held, peer_held)
            weights = [math.exp((s - top) / TEMPERATURE) for s in scores]
            total = sum(weights)
            found += [
                Candidate(topic, span, p, w / total) for p, w in zip(paths, weights, strict=True)
            ]
        return sorted(found, key=lambda c: (-c.support, len(c.path), -len(c.span)))

    def _walks(self, planning: Planning, candidate: Candidate) -> list[Path]:
        """At most ``max_walks`` walks of a candidate; a note says when more were cut."""
        cap = self.config.max_walks
        read = follow_capped(self.graph, candidate.topic, candidate.path, cap)
        if read.cut:
            where = f"{describe(candidate.path, self.verbalizer)} from {candidate.span!r}"
            planning.notes.append(cut_note("walks", where, cap, "plan_max_walks"))
        return read.items

    def _execute(self, planning: Planning, candidates: list[Candidate]) -> None:
        """Walk ``candidates`` in order until ``max_plans`` plans reached something."""
        for tried, candidate in enumerate(candidates):
            if len(planning.plans) >= self.config.max_plans or tried >= 4 * self.config.max_plans:
                break
            walks = self._walks(planning, candidate)
            if walks:
                reads = describe(candidate.path, self.verbalizer)
                worded = path_key(candidate.path) in planning.worded
                planning.plans.append(Plan(candidate, walks, reads, generated=worded))
            else:
                reads = describe(candidate.path, self.verbalizer)
                hub = len(candidate.path) > 1 and (
                    self.graph.degree(candidate.topic, at_most=SORT_WINDOW + 1) > SORT_WINDOW
                )
                within = (
                    f" within the {SORT_WINDOW:,} first steps sampled at this hub of more "
                    f"than {SORT_WINDOW:,} edges"
                    if hub
                    else ""
                )
                planning.notes.append(f"{reads} reaches nothing from {candidate.span!r}{within}")

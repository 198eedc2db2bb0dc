"""How well each relation path from a topic reads as the question: the zero-shot score.

A path is asked as the short questions that ``relation_fit.short_questions`` makes of a
relation, read along the whole path: from its answer back to the topic and from the
topic out (a director's films' writers: "what wrote directed by NE", "NE directed
written by what", ...). Its score is their mean similarity to the masked question,
plus a prior per hop count. On 300 MetaQA dev questions (fold 0, seed 11) this put the
right path first more often than the path's bare phrase ("starred in NE"), most of all
on 1-hop questions.

Where the profile names its relations as nouns too (``kgmw:nounLabel``: a film's
*director*, *screenwriter*), a path is also asked as the noun phrase of its answer
("the actor of the ones with the same director as NE", ``noun_phrase``). Questions
name relations by such nouns ("which films share the same screenwriter as NE"), and
MiniLM reads "screenwriter" no closer to "written by" than to "directed by". On
MetaQA dev (fold 0, 300 per hop count, seed 5) the first answers went from 229 / 241 /
182 to 257 / 247 / 200 right, with the question's words read against the nouns too
(``mentions.py``; seed 11: 224 / 254 / 171 to 262 / 255 / 195).

A question that asks for the topic's peers ("which films share the director of NE",
"who starred together with NE") is answered by a path that starts out and straight
back over one relation (``directed by → directed by⁻¹``); an encoder reads such a
question as close to the one relation it names, so such a path gains ``PEER_BONUS``
when the question, with every linked name left out ("The Sun Also Rises"), has a word
of sharing.

A question about a relation its topic lacks ("who directed NE" of a film with no
director) is answered, if at all, along a detour; ``PathReading.unheld`` says how much
better a path the topic's peers hold but it lacks reads (``peer_paths.py``).

>>> asks_for_peers("which films share the same director as NE"), asks_for_peers("who directed NE")
(True, False)
>>> from pyoxigraph import NamedNode
>>> d, g = NamedNode("http://x/directed_by"), NamedNode("http://x/genre")
>>> starts_out_and_back(((d, True), (d, False))), starts_out_and_back(((g, True), (d, True), (d, False)))
(True, False)
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np

from middleware.kg.walks import RelationPath
from middleware.planning.masking import MASK
from middleware.planning.peer_paths import lacked_paths, peer_steps
from middleware.planning.relation_fit import short_questions
from middleware.planning.relpaths import LENGTH_PRIOR, path_key, phrase
from middleware.planning.wordings import readings
from middleware.text.embeddings.encoders import Encoder, encode_groups, normalize
from middleware.text.verbalize import Verbalizer

# added to a path's score per hop count: a longer path must read better to win
# (chosen on MetaQA dev, fold 0, seed 11, with PEER_BONUS)
QUESTION_PRIOR = {1: 0.0, 2: -0.08, 3: -0.12}
PEER_BONUS = 0.12
# words that ask for what shares something with the topic ("acted with NE"); any
# hyphen in "co-star"
PEER_WORDS = re.compile(
    r"\b(same|also(?! known)|together|alongside|shares?|shared|sharing"
    r"|(?:acted|starred|appeared|played|performed|worked) with"
    r"|co[-\u2010-\u2015]?star(?:s|red|ring)?)\b",
    re.IGNORECASE,
)
# vectors kept: a path's questions' mean, or its phrase (50,000 × 384 float32: 77 MB)
KEPT_PATHS = 50_000
SHORTLIST = 40  # a topic's paths asked as questions, the best read as phrases
LACKED_STEPS = 5  # steps a topic lacks widened into paths: the best read as phrases
# a path the topic lacks that reads this much better than its best counts fully
# (chosen on the unanswerable-metaqa and MetaQA dev answers that fit plan:zero-shot)
UNHELD_SCALE = 10.0


def asks_for_peers(unnamed: str) -> bool:
    """Whether the ``unnamed`` question (its linked names left out) asks for what
    shares something with its topic."""
    return PEER_WORDS.search(unnamed) is not None


def starts_out_and_back(path: RelationPath) -> bool:
    """Whether ``path`` starts with a step and straight back over the same relation:
    to the topic's peers."""
    return len(path) >= 2 and path[0][0] == path[1][0] and path[0][1] != path[1][1]


def noun_phrase(path: RelationPath, verbalizer: Verbalizer) -> str | None:
    """The far end of ``path`` named with its relations' nouns, from the topic (``NE``)
    out: a step forward is "the N of ...", one backwards "the ones with N ...", and a
    step out and straight back over one relation "the ones with the same N as ...".
    None where a relation has no noun (``Verbalizer.relation_noun``).

    >>> from middleware.kg.backends.local import LocalStore
    >>> from middleware.planning.relpaths import from_key
    >>> v = Verbalizer(LocalStore(profile="metaqa"))
    >>> r = "https://kgmw.dev/metaqa/relation/"
    >>> noun_phrase(from_key(f"<{r}written_by>/^<{r}written_by>/<{r}has_genre>"), v)
    'the genre of the ones with the same screenwriter as NE'
    >>> noun_phrase(from_key(f"^<{r}starred_actors>"), v)
    'the ones with actor NE'
    """
    nouns = [verbalizer.relation_noun(predicate) for predicate, _ in path]
    phrase = MASK
    i = 0
    while i < len(path):
        (predicate, forward), noun = path[i], nouns[i]
        if noun is None:
            return None
        if forward and i + 1 < len(path) and path[i + 1] == (predicate, False):
            phrase, i = f"the ones with the same {noun} as {phrase}", i + 2
            continue
        phrase = f"the {noun} of {phrase}" if forward else f"the ones with {noun} {phrase}"
        i += 1
    return phrase


def path_questions(path: RelationPath, verbalizer: Verbalizer) -> list[str]:
    """The short questions that ask for the far end of ``path`` from its topic, each
    step read as ``wordings.readings`` reads it (a relation with no inverse label too),
    and, where every relation has a noun, its ``noun_phrase`` asked three ways.

    >>> from middleware.kg.backends.local import LocalStore
    >>> from middleware.planning.relpaths import from_key
    >>> v = Verbalizer(LocalStore(profile="metaqa"))
    >>> r = "https://kgmw.dev/metaqa/relation/"
    >>> path_questions(from_key(f"<{r}directed_by>"), v)  # doctest: +NORMALIZE_WHITESPACE
    ['what directed NE', 'NE directed by what', 'what is NE directed by', 'directed NE',
     'what is the director of NE', 'who is the director of NE', 'the director of NE']
    >>> path_questions(from_key(f"^<{r}directed_by>/<{r}written_by>"), v)[:2]
    ['what wrote directed by NE', 'NE directed written by what']
    """
    steps = readings(path, verbalizer)
    back = " ".join(step.answer_side for step in reversed(steps))
    out = " ".join(step.topic_side for step in steps)
    named = noun_phrase(path, verbalizer)
    nouns = [f"what is {named}", f"who is {named}", named] if named else []
    return short_questions(out, back) + nouns


class PathReading:
    """Scores of relation paths against masked questions over one graph (safe to share
    between threads). A path's score is linear in its questions' vectors, so only
    their mean is kept, once per path. Only a ``SHORTLIST`` of a topic's paths, those
    whose bare phrase reads best, is asked as questions: four texts a path (seven with
    nouns) cost as many times the encoding (on 300 MetaQA dev questions the best path
    by questions was among the 20 best by phrase every time)."""

    def __init__(self, encoder: Encoder, verbalizer: Verbalizer) -> None:
        self.encoder = encoder
        self.verbalizer = verbalizer
        self._kept: dict[tuple[str, bool], np.ndarray] = {}  # (path, asked): its vector
        self._lock = threading.Lock()

    def _texts(self, path: RelationPath, asked: bool) -> list[str]:
        return path_questions(path, self.verbalizer) if asked else [phrase(path, self.verbalizer)]

    def _matrix(self, paths: Sequence[RelationPath], *, asked: bool) -> np.ndarray:
        """One row per path: the mean unit vector of its questions (``asked``) or its
        phrase."""
        keys = [(path_key(p), asked) for p in paths]
        with self._lock:
            rows = {k: self._kept[k] for k in keys if k in self._kept}
            missing = {k: p for k, p in zip(keys, paths, strict=True) if k not in rows}
            if missing:
                texts = [self._texts(p, asked) for p in missing.values()]
                blocks = encode_groups(self.encoder, texts)
                fresh = {k: b.mean(axis=0) for k, b in zip(missing, blocks, strict=True)}
                rows.update(fresh)
                if len(self._kept) + len(fresh) > KEPT_PATHS:
                    self._kept.clear()
                if len(fresh) <= KEPT_PATHS:
                    self._kept.update(fresh)
            return np.stack([rows[k] for k in keys])

    def phrase_scores(self, paths: Sequence[RelationPath], question: np.ndarray) -> np.ndarray:
        """Each path's bare phrase ("starred in NE"): its cosine to the masked
        ``question`` plus ``relpaths.LENGTH_PRIOR`` (the learned vote's blend reads
        paths this way)."""
        query = normalize(question[None, :])[0]
        prior = np.array([LENGTH_PRIOR.get(len(p), 0.0) for p in paths])
        read: np.ndarray = self._matrix(paths, asked=False) @ query + prior
        return read

    def shortlist(
        self, paths: Sequence[RelationPath], question: np.ndarray, *, peers: bool
    ) -> list[RelationPath]:
        """The ``SHORTLIST`` paths whose phrase reads best as the masked ``question``
        (plus its length prior), and, where it asks for ``peers``, every path that
        starts out and back; in their order."""
        if len(paths) <= SHORTLIST:
            return list(paths)
        read = self.phrase_scores(paths, question)
        best = set(np.argsort(-read, kind="stable")[:SHORTLIST].tolist())
        return [p for i, p in enumerate(paths) if i in best or (peers and starts_out_and_back(p))]

    def scores(
        self, paths: Sequence[RelationPath], question: np.ndarray, *, peers: bool
    ) -> list[float]:
        """Each path's score for the masked ``question`` (its vector): the mean
        similarity of its questions, its hop count's prior, and ``PEER_BONUS`` for a
        path that starts out and back where the question asks for ``peers``."""
        if not paths:
            return []
        query = normalize(question[None, :])[0]
        read = (self._matrix(paths, asked=True) @ query).tolist()
        found = []
        for path, similarity in zip(paths, read, strict=True):
            bonus = PEER_BONUS if peers and starts_out_and_back(path) else 0.0
            found.append(similarity + QUESTION_PRIOR.get(len(path), 0.0) + bonus)
        return found

    def unheld(
        self,
        grown: Sequence[RelationPath],
        held_best: float,
        question: np.ndarray,
        *,
        peers: bool,
    ) -> float:
        """How much better the best path the topic lacks but its peers hold (read off
        the paths ``grown`` from it) reads as the masked ``question`` than
        ``held_best``, the best score of a path it holds: times ``UNHELD_SCALE``, from
        0 (none reads better) to 1."""
        steps = peer_steps(grown)
        if not steps:
            return 0.0
        if len(steps) > LACKED_STEPS:
            read = self.phrase_scores([(step,) for step in steps], question)
            best = sorted(np.argsort(-read, kind="stable")[:LACKED_STEPS].tolist())
            steps = [steps[i] for i in best]
        lacked = self.shortlist(lacked_paths(grown, steps), question, peers=peers)
        margin = max(self.scores(lacked, question, peers=peers)) - held_best
        return min(max(margin, 0.0) * UNHELD_SCALE, 1.0)

"""What supports an answer: evidence that joins an entity the question names to it.

An answer entity merely mentioned in the evidence is not supported. Two rules:

- ``walks`` (``plan``, ``ksl``): a walked path that starts at a question entity and
  reaches the answer entity; the support is the path up to it.
- ``facts`` (RoK, QSM, PG and the ``+plan`` variants): a chain of at most ``max_hops``
  evidence triples (path hops and single facts, read in either direction) from a
  question entity to the answer entity; the shortest chains are kept. Literals join
  nothing (two films released in "1995" are not related by it).

>>> from pyoxigraph import NamedNode
>>> from middleware.kg.base import Triple
>>> from middleware.methods.answer import EvidenceTriple, QuestionEntity
>>> E = "https://kgmw.dev/metaqa/entity/"
>>> R = NamedNode("https://kgmw.dev/metaqa/relation/directed_by")
>>> heat, mann = NamedNode(E + "Heat"), NamedNode(E + "Michael_Mann")
>>> rain, scott = NamedNode(E + "Black_Rain"), NamedNode(E + "Ridley_Scott")
>>> evidence = Evidence(triples=[
...     EvidenceTriple(Triple(heat, R, mann, "s"), "Heat | directed by | Michael Mann"),
...     EvidenceTriple(Triple(rain, R, scott, "s"), "Black Rain | directed by | Ridley Scott")])
>>> asked = {heat.value: QuestionEntity(heat.value, "Heat", "Heat", "exact", "s")}
>>> [s.text for s in find_support(evidence, asked, [mann.value], rule="facts")]
['Heat | directed by | Michael Mann']
>>> find_support(evidence, asked, [scott.value], rule="facts")
[]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal
from urllib.parse import unquote

from pyoxigraph import NamedNode

from middleware.kg.base import Hop, Path, Triple
from middleware.methods.answer import Evidence, QuestionEntity, Support

SupportRule = Literal["walks", "facts"]
MAX_SUPPORT = 5  # chains kept per answer


def find_support(
    evidence: Evidence,
    asked: Mapping[str, QuestionEntity],
    answers: Iterable[str],
    *,
    rule: SupportRule,
    max_hops: int = 3,
    limit: int = MAX_SUPPORT,
) -> list[Support]:
    """The chains of ``evidence`` from an ``asked`` entity to one of ``answers`` (IRIs),
    shortest first, strong links before weak ones; an answer that is itself a question
    entity needs a chain like any other."""
    wanted = list(dict.fromkeys(answers))
    # entities the question names are answers only when nothing else is ("Which of Heat
    # and Casino did Michael Mann direct?" "Heat")
    wanted = [a for a in wanted if a not in asked] or wanted
    if not asked or not wanted or not evidence:
        return []
    texts = _texts(evidence)
    found = (
        _walked(evidence, asked, set(wanted))
        if rule == "walks"
        else _chained(evidence, asked, set(wanted), max_hops)
    )
    found.sort(key=lambda item: (asked[item[0]].weak is not None, len(item[2])))
    kept: list[Support] = []
    per_answer: dict[str, int] = {}
    for start, answer, triples in found:
        if per_answer.get(answer, 0) >= limit:
            continue
        per_answer[answer] = per_answer.get(answer, 0) + 1
        whole = texts.get(tuple(t.key() for t in triples))
        text = whole or " ; ".join(texts.get((t.key(),)) or _plain(t) for t in triples)
        kept.append(Support(start, answer, tuple(triples), text, asked[start].weak))
    return kept


def _walked(
    evidence: Evidence, asked: Mapping[str, QuestionEntity], wanted: set[str]
) -> list[tuple[str, str, list[Triple]]]:
    """Walked paths from a question entity, cut where they reach an answer entity."""
    found: list[tuple[str, str, list[Triple]]] = []
    seen: set[tuple[tuple[str, str, str], ...]] = set()
    for item in evidence.paths:
        nodes = item.path.nodes
        if not nodes or not isinstance(nodes[0], NamedNode) or nodes[0].value not in asked:
            continue
        for depth, node in enumerate(nodes[1:], start=1):
            if isinstance(node, NamedNode) and node.value in wanted:
                triples = [hop.triple for hop in item.path.hops[:depth]]
                key = tuple(t.key() for t in triples)
                if key not in seen:
                    seen.add(key)
                    found.append((nodes[0].value, node.value, triples))
                break
    return found


def _chained(
    evidence: Evidence, asked: Mapping[str, QuestionEntity], wanted: set[str], max_hops: int
) -> list[tuple[str, str, list[Triple]]]:
    """Shortest chains (breadth first, either direction) from each question entity."""
    edges: dict[str, list[tuple[str, Triple]]] = {}
    for triple in evidence.all_triples():
        # a literal ("1995") is shared by unrelated things: it joins nothing
        if isinstance(triple.subject, NamedNode) and isinstance(triple.object, NamedNode):
            _add(edges, triple.subject.value, triple.object.value, triple)
    found: list[tuple[str, str, list[Triple]]] = []
    for start in asked:
        parent: dict[str, tuple[str, Triple] | None] = {start: None}
        queue: deque[tuple[str, int]] = deque([(start, 0)])
        while queue:
            node, depth = queue.popleft()
            if node in wanted and node != start:
                found.append((start, node, _chain(parent, node)))
            if depth >= max_hops:
                continue
            for neighbour, triple in edges.get(node, ()):
                if neighbour not in parent:
                    parent[neighbour] = (node, triple)
                    queue.append((neighbour, depth + 1))
    return found


def _add(edges: dict[str, list[tuple[str, Triple]]], a: str, b: str, triple: Triple) -> None:
    edges.setdefault(a, []).append((b, triple))
    edges.setdefault(b, []).append((a, triple))


def _chain(parent: Mapping[str, tuple[str, Triple] | None], end: str) -> list[Triple]:
    triples: list[Triple] = []
    node = end
    while (step := parent[node]) is not None:
        node, triple = step
        triples.append(triple)
    return triples[::-1]


def _texts(evidence: Evidence) -> dict[tuple[tuple[str, str, str], ...], str]:
    """Texts by the keys of their triples: each fact's, and each whole path's."""
    texts: dict[tuple[tuple[str, str, str], ...], str] = {
        (t.triple.key(),): t.text for t in evidence.triples
    }
    for item in evidence.paths:
        texts.setdefault(tuple(hop.triple.key() for hop in item.path.hops), item.text)
    return texts


def _plain(triple: Triple) -> str:
    parts = (triple.subject, triple.predicate, triple.object)
    return " | ".join(_local(t.value) if isinstance(t, NamedNode) else str(t) for t in parts)


def _local(iri: str) -> str:
    return unquote(iri.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1])


def support_path(chain: Support) -> Path:
    """The chain as a walk from the question's entity to the answer's: each triple read
    in the direction that continues from where the last one ended."""
    hops: list[Hop] = []
    at = chain.start
    for triple in chain.triples:
        forward = isinstance(triple.subject, NamedNode) and triple.subject.value == at
        hops.append(Hop(triple, forward=forward))
        end = triple.object if forward else triple.subject
        at = end.value if isinstance(end, NamedNode) else str(end)
    return Path(tuple(hops))


def weakest(support: Sequence[Support]) -> str | None:
    """Why every supporting chain starts at a weakly linked entity, or None when one
    starts at a strong link (or nothing supports the answer)."""
    if not support or any(s.weak is None for s in support):
        return None
    return support[0].weak

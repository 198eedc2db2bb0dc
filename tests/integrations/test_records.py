"""The order of evidence records: scored paths best first, else the method's order."""

from __future__ import annotations

from pyoxigraph import Literal, NamedNode

from middleware.integrations.records import evidence_records
from middleware.kg.base import Hop, Path, Triple
from middleware.methods.answer import Answer, Evidence, EvidencePath, EvidenceTriple, Support

EX = "http://example.org/"


def _path(name: str, score: float | None) -> EvidencePath:
    triple = Triple(NamedNode(EX + name), NamedNode(EX + "p"), NamedNode(EX + "o"), "g")
    return EvidencePath(Path((Hop(triple, forward=False),)), name, score)


def _answer(*paths: EvidencePath) -> Answer:
    fact = Triple(NamedNode(EX + "s"), NamedNode(EX + "label"), Literal("S"), "g")
    evidence = Evidence(list(paths), [EvidenceTriple(fact, "s | label | S", role="filtered")])
    return Answer("Q?", "A", "m", evidence=evidence)


def test_scored_paths_come_best_first_then_the_triples() -> None:
    records = evidence_records(_answer(_path("a", 0.1), _path("b", 0.5), _path("c", 0.1)), 9)
    assert [r.text for r in records] == ["b", "a", "c", "s | label | S"]
    assert [r.score for r in records] == [0.5, 0.1, 0.1, None]
    triple = records[-1].metadata
    assert (triple["object"], triple["object_type"], triple["role"]) == ("S", "literal", "filtered")


def test_paths_without_scores_keep_the_methods_order() -> None:
    records = evidence_records(_answer(_path("a", 0.1), _path("b", None), _path("c", 0.9)), 2)
    assert [r.text for r in records] == ["a", "b"]
    assert "score" not in records[1].metadata


def test_a_hop_keeps_its_direction_and_keys_are_stable() -> None:
    [record] = evidence_records(_answer(_path("a", None)), 1)
    assert record.metadata["hops"] == [
        {"subject": EX + "a", "predicate": EX + "p", "object": EX + "o", "forward": False}
    ]
    assert record.metadata["nodes"] == [EX + "o", EX + "a"]
    assert record.key == evidence_records(_answer(_path("a", 0.3)), 1)[0].key


def test_a_record_says_whether_it_supports_the_answer() -> None:
    """The fact a supporting chain runs through is marked; the others are not."""
    answer = _answer(_path("a", None))
    fact = answer.evidence.triples[0].triple
    answer.support = [Support(EX + "s", "S", (fact,), "s | label | S")]
    path, triple = evidence_records(answer, 9)
    assert path.metadata["supports_answer"] is False
    assert triple.metadata["supports_answer"] is True

"""Two-step pruning: the popularity rule, the threshold rule, the ground-graph order."""

from __future__ import annotations

from pyoxigraph import Literal, NamedNode

from middleware.kg.base import Triple
from middleware.methods.collect import BaseTriple
from middleware.methods.pseudograph.pruning import Match, group_by_subject, prune

WD = "http://www.wikidata.org/entity/"


def match(subject: str, label: str, relation: str, obj: str, score: float, query: int = 0) -> Match:
    triple = Triple(
        NamedNode(WD + subject),
        NamedNode("http://x/" + relation.replace(" ", "_")),
        Literal(obj),
        "wikidata",
    )
    return Match(query, BaseTriple(triple, (label, relation, obj)), score)


def test_of_same_label_entities_the_one_with_most_matched_triples_survives() -> None:
    """Seven entities may be labelled "Yao Ming"; the basketball player has the most facts."""
    matches = [
        match("Q4337", "Yao Ming", "born in", "Shanghai", 0.82),
        match("Q4337", "Yao Ming", "occupation", "basketball player", 0.78),
        match("Q4337", "Yao Ming", "member of team", "Houston Rockets", 0.74),
        # a namesake matches one fact, more closely: the count rule still drops it
        match("Q1000", "Yao Ming", "born in", "Hebei", 0.95),
        match("Q2000", "Yao Ming", "occupation", "painter", 0.80),
    ]
    result = prune(matches, k=1, threshold=0.7)
    assert [g.subject.value for g in result.kept] == [WD + "Q4337"]  # type: ignore[union-attr]
    assert sorted(g.subject.value for g in result.unpopular) == [WD + "Q1000", WD + "Q2000"]  # type: ignore[union-attr]
    assert result.kept[0].count == 3


def test_threshold_drops_entities_whose_mean_cosine_is_low() -> None:
    matches = [
        match("Q1", "Lake Superior", "area", "82350", 0.9),
        match("Q1", "Lake Superior", "inflow", "Nipigon River", 0.7),  # mean 0.8
        match("Q2", "Lake Michigan", "area", "57750", 0.72),  # mean 0.72
        match("Q3", "Dongting Lake", "area", "4350", 0.66),
        match("Q3", "Dongting Lake", "country", "China", 0.6),  # mean 0.63: dropped
    ]
    result = prune(matches, k=3, threshold=0.7)
    assert [g.label for g in result.kept] == ["Lake Superior", "Lake Michigan"]
    assert [g.label for g in result.below_threshold] == ["Dongting Lake"]
    assert round(result.kept[0].score, 3) == 0.8
    assert result.to_dict()["dropped_below_threshold"] == [
        {"entity": "Dongting Lake", "score": 0.63}
    ]


def test_threshold_is_inclusive_and_a_high_one_prunes_everything() -> None:
    matches = [match("Q1", "A", "r", "x", 0.7)]
    assert [g.label for g in prune(matches, k=1, threshold=0.7).kept] == ["A"]
    assert prune(matches, k=1, threshold=0.71).kept == []


def test_ground_graph_is_ordered_by_score_and_each_entity_by_its_best_triples() -> None:
    matches = [
        match("Q1", "A", "r1", "x", 0.71),
        match("Q2", "B", "r1", "y", 0.95),
        match("Q1", "A", "r2", "z", 0.93),
        match("Q2", "B", "r2", "w", 0.75),
    ]
    kept = prune(matches, k=2, threshold=0.5).kept
    assert [g.label for g in kept] == ["B", "A"]  # means 0.85 and 0.82
    assert [b.text for b, _ in kept[1].triples] == ["A | r2 | z", "A | r1 | x"]


def test_a_triple_found_by_two_pseudo_triples_counts_once_at_its_best_score() -> None:
    matches = [
        match("Q1", "A", "r", "x", 0.6, query=0),
        match("Q1", "A", "r", "x", 0.9, query=1),
        match("Q2", "B", "r", "y", 0.8, query=0),
        match("Q2", "B", "s", "z", 0.8, query=1),
    ]
    groups = {g.label: g for g in group_by_subject(matches)}
    assert groups["A"].count == 1 and groups["A"].score == 0.9
    assert [g.label for g in prune(matches, k=1, threshold=0.5).kept] == ["B"]  # 2 triples beat 1


def test_k_of_zero_keeps_nothing_and_no_matches_give_an_empty_graph() -> None:
    assert prune([match("Q1", "A", "r", "x", 0.9)], k=0, threshold=0.1).kept == []
    assert prune([], k=3, threshold=0.7).kept == []

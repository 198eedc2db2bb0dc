"""A question's gold answers become IRIs by their labels alone: up to case and accents,
never by a typo or a name variant, so learning never builds the name-variant table
(on a graph of 31 M triples that table alone took 18 s)."""

from __future__ import annotations

from middleware.cli.learn import lesson
from middleware.eval.items import EvalItem
from middleware.kg.backends.local import LocalStore
from middleware.testing.graphs import ex, films_path
from middleware.text.linking import EntityLinker
from middleware.text.stored_labels import label_index


def test_answers_are_linked_by_their_labels_without_building_name_variants() -> None:
    graph = LocalStore()
    graph.load([films_path()])
    item = EvalItem("1", "Who directed Avatar?", answers=("james CAMERON", "Cameron"))
    learned = lesson("mine", "dev", item, graph, EntityLinker(graph))
    assert learned.answers == (ex("Cameron"),)  # "Cameron" is only a name variant
    assert label_index(graph)._variants is None

from __future__ import annotations

from pyoxigraph import Literal, NamedNode

from middleware.kg.backends.local import LocalStore
from middleware.kg.base import Hop, Path, Triple
from middleware.text.verbalize import Verbalizer
from tests.conftest import FILMS

EX = "http://example.org/film/"


def test_triples_and_reversed_hops_with_metaqa_ontology() -> None:
    store = LocalStore(profile="metaqa")
    store.load_text(
        "Titanic|directed_by|James Cameron\nTitanic|starred_actors|Kate Winslet\n", name="kb.txt"
    )
    verbalizer = Verbalizer(store)
    triple = store.neighbors(store.entity_iri("Titanic"))[0]
    assert verbalizer.triple(triple) == "Titanic | directed by | James Cameron"
    assert verbalizer.hop(Hop(triple, forward=False)) == "James Cameron | directed | Titanic"
    path = store.paths(store.entity_iri("James Cameron"), store.entity_iri("Kate Winslet"))[0]
    assert verbalizer.path(path) == "James Cameron | directed | Titanic | starring | Kate Winslet"


def test_unknown_relations_and_literals_in_a_generic_graph() -> None:
    store = LocalStore()
    store.load([FILMS])
    verbalizer = Verbalizer(store, literal_max_chars=12)
    texts = verbalizer.triples(store.neighbors(EX + "Titanic", direction="out"))
    assert "Titanic | directed by | James Cameron" in texts
    assert "Titanic | release year | 1997" in texts
    reverse = Path(
        (
            Hop(
                Triple(
                    NamedNode(EX + "Winslet"), NamedNode(EX + "marriedTo"), NamedNode(EX + "Mendes")
                ),
                False,
            ),
        )
    )
    assert verbalizer.path(reverse) == "Sam Mendes | married to (reversed) | Kate Winslet"
    long = Triple(
        NamedNode(EX + "Titanic"),
        NamedNode(EX + "note"),
        Literal("a\nvery long\tnote indeed", language="en"),
    )
    assert verbalizer.triple(long) == "Titanic | note | a very long…"


def test_ignored_predicates_are_skipped() -> None:
    store = LocalStore()
    store.load([FILMS])
    label = Triple(
        NamedNode(EX + "Titanic"),
        NamedNode("http://www.w3.org/2000/01/rdf-schema#label"),
        Literal("Titanic"),
    )
    assert Verbalizer(store).triples([label]) == []


def test_labels_from_the_graph_name_unknown_relations() -> None:
    store = LocalStore(profile="freebase")
    store.load_text(
        "/m/01\t/film/film/story_by\t/m/02\n/film/film/story_by\tfilm story by\n/m/01\tTitanic\n",
        name="x.tsv",
    )
    triple = store.neighbors("http://rdf.freebase.com/ns/m.01")[0]
    assert Verbalizer(store).triple(triple) == "Titanic | film story by | m.02"

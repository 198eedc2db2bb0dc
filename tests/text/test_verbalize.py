from __future__ import annotations

from pyoxigraph import Literal, NamedNode

from middleware.kg.backends.local import LocalStore
from middleware.kg.base import Hop, Path, Triple
from middleware.text.verbalize import Verbalizer
from tests.conftest import FILMS

EX = "http://example.org/film/"
SHOP = "http://example.org/shop/"
WIDGETS = """\
@prefix : <http://example.org/shop/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:WidgetPro :madeBy :AcmeCorp ; :soldIn :Springfield ; rdfs:label "Widget Pro" .
:AcmeCorp :basedIn :Springfield ; rdfs:label "Acme Corp" .
:Springfield rdfs:label "Springfield" .
"""


def _shop() -> tuple[LocalStore, Verbalizer]:
    store = LocalStore()
    store.load_text(WIDGETS, name="shop.ttl")
    return store, Verbalizer(store)


def _hop(subject: str, predicate: str, obj: str, forward: bool) -> Hop:
    triple = Triple(NamedNode(SHOP + subject), NamedNode(SHOP + predicate), NamedNode(SHOP + obj))
    return Hop(triple, forward)


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
    # no inverse label: the hop reads as the stored triple, turned around
    assert verbalizer.path(reverse) == "Kate Winslet | married to | Sam Mendes"
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


def test_a_reversed_hop_without_an_inverse_label_reads_as_the_stored_triple() -> None:
    store, verbalizer = _shop()
    found = store.paths(SHOP + "AcmeCorp", SHOP + "WidgetPro", max_hops=1)
    assert [[h.forward for h in p.hops] for p in found] == [[False]]
    path = found[0]
    assert verbalizer.path(path, style="arrows") == "Widget Pro —made by→ Acme Corp"
    assert verbalizer.path(path) == "Widget Pro | made by | Acme Corp"
    assert verbalizer.hop(path.hops[0]) == "Widget Pro | made by | Acme Corp"
    assert "(reversed)" not in verbalizer.path(path) + verbalizer.path(path, style="arrows")


def test_a_path_reads_each_turned_run_of_hops_as_its_own_clause() -> None:
    _, verbalizer = _shop()
    # Springfield <-basedIn- Acme Corp <-madeBy- Widget Pro: one clause, turned whole
    turned = Path(
        (
            _hop("AcmeCorp", "basedIn", "Springfield", False),
            _hop("WidgetPro", "madeBy", "AcmeCorp", False),
        )
    )
    assert verbalizer.path(turned, style="arrows") == (
        "Widget Pro —made by→ Acme Corp —based in→ Springfield"
    )
    # Widget Pro -madeBy-> Acme Corp -basedIn-> Springfield <-soldIn- Widget Pro ... as walked:
    # forward hops keep their direction, the turned one is a clause of its own
    mixed = Path(
        (
            _hop("WidgetPro", "madeBy", "AcmeCorp", True),
            _hop("AcmeCorp", "basedIn", "Springfield", True),
            _hop("WidgetPro", "soldIn", "Springfield", False),
        )
    )
    assert verbalizer.path(mixed) == (
        "Widget Pro | made by | Acme Corp | based in | Springfield; "
        "Widget Pro | sold in | Springfield"
    )
    back_and_forth = Path(
        (
            _hop("WidgetPro", "madeBy", "AcmeCorp", False),
            _hop("WidgetPro", "soldIn", "Springfield", True),
        )
    )
    assert verbalizer.path(back_and_forth, style="arrows") == (
        "Widget Pro —made by→ Acme Corp; Widget Pro —sold in→ Springfield"
    )


def test_an_inverse_label_still_reads_in_the_walked_direction() -> None:
    store = LocalStore(profile="metaqa")
    store.load_text(
        "Titanic|directed_by|James Cameron\nAvatar|directed_by|James Cameron\n", name="kb.txt"
    )
    verbalizer = Verbalizer(store)
    path = store.paths(store.entity_iri("Titanic"), store.entity_iri("Avatar"))[0]
    assert verbalizer.path(path, style="arrows") == (
        "Titanic —directed by→ James Cameron —directed→ Avatar"
    )

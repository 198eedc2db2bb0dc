from __future__ import annotations

import pytest
from pyoxigraph import NamedNode

from middleware.errors import BadRequest
from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.kg.backends.local import LocalStore
from middleware.text.folding import fold
from middleware.text.linking import EntityLinker
from tests.conftest import FILMS

EX = "http://example.org/film/"


@pytest.fixture(scope="module")
def films() -> LocalStore:
    store = LocalStore(profile="generic")
    store.load([FILMS])
    return store


def test_exact_alias_folded_fuzzy(films: LocalStore) -> None:
    linker = EntityLinker(films)
    best = linker.link("Kate Winslet")[0]
    assert (best.iri.value, best.match) == (EX + "Winslet", "exact")
    assert linker.link("Jim Cameron")[0].match == "alias"
    assert linker.link("kate  WINSLET")[0].match == "folded"
    assert (linker.link("Zoe Saldana")[0].iri, linker.link("Zoe Saldana")[0].match) == (
        NamedNode(EX + "Saldana"),
        "folded",
    )
    typo = linker.link("Leonardo DiCapro")[0]
    assert (
        typo.iri == NamedNode(EX + "DiCaprio") and typo.match == "fuzzy" and typo.score is not None
    )


def test_nothing_matches(films: LocalStore) -> None:
    assert EntityLinker(films).link("Completely Unrelated Words") == []
    with pytest.raises(BadRequest):
        EntityLinker(films).link("   ")


def test_ties_broken_by_degree() -> None:
    store = LocalStore(profile="metaqa")
    store.load_text("A|r|Paris\nB|r|Paris\nC|r|paris\n", name="kb.txt")
    found = EntityLinker(store).link("PARIS")
    assert [e.label for e in found] == ["Paris", "paris"]  # same tier; Paris has degree 2


def test_index_rebuilt_after_a_load() -> None:
    store = LocalStore(profile="metaqa")
    store.load_text("A|r|B\n", name="kb.txt")
    linker = EntityLinker(store)
    assert linker.link("Zed") == []
    store.load_text("Zed|r|B\n", name="kb2.txt")
    assert linker.link("Zed")[0].label == "Zed"


def test_endpoint_linking_uses_search(oxigraph_server: str) -> None:
    linker = EntityLinker(SparqlEndpoint(oxigraph_server))
    best = linker.link("james cameron")[0]
    assert best.iri == NamedNode(EX + "Cameron") and best.match == "folded"


def test_fold() -> None:
    assert fold("Amélie") == fold("AMELIE") == "amelie"

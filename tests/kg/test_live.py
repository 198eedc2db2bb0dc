"""Opt-in checks against public endpoints: pytest --live (network required)."""

from __future__ import annotations

import pytest

from middleware.kg.backends.endpoint import SparqlEndpoint
from middleware.text.linking import EntityLinker

pytestmark = pytest.mark.live
WIKIDATA = "https://query.wikidata.org/sparql"


def test_wikidata_search_neighbors_and_labels() -> None:
    wikidata = SparqlEndpoint(WIKIDATA, profile="wikidata", timeout=30)
    best = EntityLinker(wikidata).best("Douglas Adams")
    assert best is not None and best.iri.value == "http://www.wikidata.org/entity/Q42"
    triples = wikidata.neighbors(best.iri, direction="out", limit=50)
    assert triples and all(
        t.predicate.value.startswith("http://www.wikidata.org/prop/direct/") for t in triples
    )
    assert wikidata.labels([best.iri])[best.iri] == "Douglas Adams"

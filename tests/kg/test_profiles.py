"""Endpoint profiles and the relation ontologies they name."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.errors import NotFound
from middleware.kg.profiles import available_profiles, load_profile
from middleware.kg.relations import load_relations


@pytest.mark.parametrize("name", ["generic", "metaqa", "freebase", "wikidata", "dbpedia"])
def test_profiles_load_with_their_relation_ontologies(name: str) -> None:
    assert name in available_profiles()
    profile = load_profile(name)
    assert profile.label_predicates
    if profile.relations is not None:
        assert len(load_relations(profile.relations)) > 5
    for template in profile.templates.values():
        assert (Path("sparql") / template).is_file()


def test_metaqa_relation_readings() -> None:
    relations = load_relations(load_profile("metaqa").relations)
    directed = relations.get("https://kgmw.dev/metaqa/relation/directed_by")
    assert (directed.reading(True), directed.reading(False)) == ("directed by", "directed")
    wikidata = load_relations(load_profile("wikidata").relations)
    assert wikidata.get("http://www.wikidata.org/prop/direct/P26").symmetric
    assert (
        wikidata.get("http://www.wikidata.org/prop/direct/P361").inverse_of
        == "http://www.wikidata.org/prop/direct/P527"
    )


def test_metaqa_relations_are_named_as_nouns_too() -> None:
    """``kgmw:nounLabel``: what the far end of a relation is to the entity it starts
    at (Heat's director); a relation the ontology names no noun for has none."""
    relations = load_relations(load_profile("metaqa").relations)
    nouns = {iri.rsplit("/", 1)[-1]: relations.get(iri).noun for iri in relations.iris()}
    assert nouns["directed_by"] == "director" and nouns["written_by"] == "screenwriter"
    assert all(nouns.values())
    assert relations.get("http://x/unknown").noun is None


def test_unknown_profile() -> None:
    with pytest.raises(NotFound, match="unknown profile 'nope'"):
        load_profile("nope")

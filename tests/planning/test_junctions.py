"""Junctions of relation paths: name collisions are left out, sparse relations stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.kg.backends.local import LocalStore
from middleware.planning.junctions import coherent_paths, junction_shares
from middleware.testing.graphs import ex

GENRE_THEN_DIRECTOR = ((ex("genre"), True), (ex("directedBy"), True))
SAME_DIRECTOR = ((ex("directedBy"), True), (ex("directedBy"), False))
STAR_THEN_LANGUAGE = ((ex("starring"), False), (ex("language"), True))
OTHERS = ["Comedy", "Horror", "Western", "Musical", "Noir", "War", "Crime", "Sport"]


def collision_turtle() -> str:
    """Fourteen films by four directors, each with an actor; six are dramas, and
    "Drama" is also a film's title (one IRI, with a director); two films have a
    language."""
    lines = [
        "@prefix ex: <http://example.org/film/> .",
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .",
    ]
    for i in range(14):
        genre = "Drama" if i < 6 else OTHERS[i - 6]
        lines.append(
            f'ex:F{i} rdfs:label "Film {i}" ; ex:directedBy ex:D{i % 4} ; '
            f"ex:genre ex:{genre} ; ex:starring ex:A{i} ."
        )
        lines.append(f'ex:A{i} rdfs:label "Actor {i}" .')
    lines += [f'ex:{g} rdfs:label "{g}" .' for g in ["Drama", *OTHERS]]
    lines += [f'ex:D{i} rdfs:label "Director {i}" .' for i in range(4)]
    lines.append("ex:Drama ex:directedBy ex:D9 .")
    lines.append("ex:F0 ex:language ex:English . ex:F1 ex:language ex:French .")
    return "\n".join(lines) + "\n"


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    data = tmp_path / "collide.ttl"
    data.write_text(collision_turtle(), encoding="utf-8")
    store = LocalStore(tmp_path / "store", profile="generic")
    store.load([data])
    return store


def test_a_name_collision_is_rare_from_both_sides(store: LocalStore) -> None:
    shares = junction_shares(store, [GENRE_THEN_DIRECTOR, SAME_DIRECTOR])
    # one genre of nine has a director; one directed entity of fifteen is a genre
    assert shares[GENRE_THEN_DIRECTOR] == pytest.approx(1 / 9)
    assert shares[SAME_DIRECTOR] == 1.0


def test_a_relation_few_entities_have_still_joins_those_that_have_it(
    store: LocalStore,
) -> None:
    # 2 of 14 films have a language, but every film with a language has an actor
    shares = junction_shares(store, [STAR_THEN_LANGUAGE])
    assert shares[STAR_THEN_LANGUAGE] == 1.0
    paths = [GENRE_THEN_DIRECTOR, SAME_DIRECTOR, STAR_THEN_LANGUAGE, (GENRE_THEN_DIRECTOR[0],)]
    assert coherent_paths(store, paths, least=0.2) == paths[1:]
    assert coherent_paths(store, paths, least=0.0) == paths


def test_shares_follow_the_data_as_it_is_now(store: LocalStore, tmp_path: Path) -> None:
    assert junction_shares(store, [GENRE_THEN_DIRECTOR])[GENRE_THEN_DIRECTOR] < 0.2
    more = tmp_path / "more.ttl"
    more.write_text(
        "@prefix ex: <http://example.org/film/> .\n"
        + "".join(f"ex:{g} ex:directedBy ex:D9 .\n" for g in OTHERS),
        encoding="utf-8",
    )
    store.load([more])  # now every genre has a director
    assert junction_shares(store, [GENRE_THEN_DIRECTOR])[GENRE_THEN_DIRECTOR] == 1.0

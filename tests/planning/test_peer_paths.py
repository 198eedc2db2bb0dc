"""Paths a topic lacks that its peers hold, read off the paths grown from it."""

from __future__ import annotations

from pyoxigraph import NamedNode

from middleware.kg.walks import RelationPath, RelationStep
from middleware.planning.peer_paths import lacked_paths, peer_steps

DIRECTED = NamedNode("http://x/directed_by")
STARRED = NamedNode("http://x/starred_actors")
GENRE = NamedNode("http://x/has_genre")
WROTE = NamedNode("http://x/written_by")


def out(p: NamedNode) -> RelationStep:
    return (p, True)


def back(p: NamedNode) -> RelationStep:
    return (p, False)


def test_a_film_without_a_director_lacks_what_films_sharing_its_actors_hold() -> None:
    grown: list[RelationPath] = [
        (out(STARRED),),
        (out(GENRE),),
        (out(STARRED), back(STARRED)),
        (out(STARRED), back(STARRED), out(DIRECTED)),  # its peers have directors
        (out(STARRED), back(STARRED), out(GENRE)),  # held by the film itself
    ]
    assert peer_steps(grown) == [out(DIRECTED)]


def test_peers_may_be_reached_over_two_relations() -> None:
    # a writer; the directors of the films it wrote stand where it stands, and star
    grown: list[RelationPath] = [
        (back(WROTE),),
        (back(WROTE), out(DIRECTED)),
        (back(WROTE), out(DIRECTED), back(STARRED)),
    ]
    assert peer_steps(grown) == [back(STARRED)]


def test_steps_two_hops_onward_are_not_the_peers() -> None:
    # the genre of the film's director's ... : onward, not out and back
    grown: list[RelationPath] = [
        (out(STARRED),),
        (out(STARRED), out(WROTE)),
        (out(STARRED), out(WROTE), out(DIRECTED)),
    ]
    assert peer_steps(grown) == []
    assert lacked_paths(grown) == []


def test_each_lacked_step_widens_into_paths_that_start_with_it() -> None:
    grown: list[RelationPath] = [
        (out(STARRED),),
        (out(STARRED), back(STARRED), out(DIRECTED)),
        (out(STARRED), back(STARRED), out(WROTE)),
    ]
    found = lacked_paths(grown, [out(DIRECTED)])
    assert found == [
        (out(DIRECTED),),
        (out(DIRECTED), back(DIRECTED)),  # the films it would share a director with
        (out(DIRECTED), back(DIRECTED), out(STARRED)),
        (out(DIRECTED), back(DIRECTED), out(DIRECTED)),
    ]
    assert all(path[0] not in {out(STARRED)} for path in lacked_paths(grown))

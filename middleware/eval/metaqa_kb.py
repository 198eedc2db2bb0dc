"""MetaQA's schema and ``kb.txt``, as the question generators need them: the first hop
of a question type, the kind of entity on each side of a relation, and who holds
which relation.

Every relation has a movie as subject; people are the objects of ``directed_by``,
``written_by`` and ``starred_actors``; tags the objects of ``has_tags``. Names are
compared folded (``text/folding.py``), as the linker compares them.

>>> kb = MetaQAKB.parse("Heat|directed_by|Michael Mann\\nHeat|has_tags|heist\\nbroken\\n")
>>> first_hop("actor_to_movie_to_director")
FirstHop(relation='starred_actors', side='object', topic_type='person')
>>> kb.of_type("person"), kb.holds("heat", first_hop("movie_to_director"))
(['Michael Mann'], True)
>>> kb.lacking(first_hop("actor_to_movie"))
['Michael Mann']
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from middleware.eval.items import read_text
from middleware.text.folding import fold

Side = Literal["subject", "object"]

# The relation each role of a question type stands for (``movie_to_tags``, ``tag_to_movie``).
ROLE_RELATIONS = {
    "actor": "starred_actors",
    "director": "directed_by",
    "writer": "written_by",
    "genre": "has_genre",
    "year": "release_year",
    "language": "in_language",
    "tags": "has_tags",
    "tag": "has_tags",
    "imdbrating": "has_imdb_rating",
    "imdbvotes": "has_imdb_votes",
}
PEOPLE = ("starred_actors", "directed_by", "written_by")
# Which (relation, side) pairs make an entity of each type; "movie" is any subject.
TYPE_SIDES: dict[str, tuple[tuple[str, Side], ...]] = {
    "person": tuple((r, "object") for r in PEOPLE),
    "tag": (("has_tags", "object"),),
}


@dataclass(frozen=True, order=True)
class FirstHop:
    """The relation a question type asks about first, the topic's side of it and its type."""

    relation: str
    side: Side
    topic_type: str


def first_hop(qtype: str) -> FirstHop | None:
    """The first hop of a MetaQA question type, or None for one it does not know."""
    roles = qtype.split("_to_")
    if len(roles) < 2:
        return None
    topic, then = roles[0], roles[1]
    if topic == "movie" and then in ROLE_RELATIONS:
        return FirstHop(ROLE_RELATIONS[then], "subject", "movie")
    if then == "movie" and topic in ROLE_RELATIONS:
        relation = ROLE_RELATIONS[topic]
        return FirstHop(relation, "object", "person" if relation in PEOPLE else "tag")
    return None


class MetaQAKB:
    """The names on each side of each relation of a ``subject|relation|object`` file."""

    def __init__(self, triples: list[tuple[str, str, str]]) -> None:
        self.names: dict[tuple[str, Side], set[str]] = defaultdict(set)
        for subject, relation, obj in triples:
            self.names[(relation, "subject")].add(subject)
            self.names[(relation, "object")].add(obj)
        self._folded: dict[object, frozenset[str]] = {}  # by type or (relation, side)
        self._of_type: dict[str, list[str]] = {}

    @classmethod
    def parse(cls, text: str) -> MetaQAKB:
        """Lines that are not three non-empty fields are left out."""
        triples = []
        for line in text.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and all(parts):
                triples.append((parts[0], parts[1], parts[2]))
        return cls(triples)

    @classmethod
    def read(cls, path: Path) -> MetaQAKB:
        return cls.parse(read_text(path))

    def _sides(self, topic_type: str) -> list[tuple[str, Side]]:
        if topic_type == "movie":
            return sorted(key for key in self.names if key[1] == "subject")
        return list(TYPE_SIDES.get(topic_type, ()))

    def folded_type(self, topic_type: str) -> frozenset[str]:
        """The folded names of every entity of ``topic_type``."""
        if topic_type not in self._folded:
            sides = self._sides(topic_type)
            self._folded[topic_type] = frozenset(fold(n) for k in sides for n in self.names[k])
        return self._folded[topic_type]

    def of_type(self, topic_type: str) -> list[str]:
        """Names of ``topic_type`` that fold like no entity of another type, sorted."""
        if topic_type not in self._of_type:
            others = [self.folded_type(t) for t in ("movie", *TYPE_SIDES) if t != topic_type]
            names = {n for key in self._sides(topic_type) for n in self.names[key]}
            self._of_type[topic_type] = sorted(
                n for n in names if not any(fold(n) in other for other in others)
            )
        return list(self._of_type[topic_type])

    def _holders(self, relation: str, side: Side) -> frozenset[str]:
        key = (relation, side)
        if key not in self._folded:
            self._folded[key] = frozenset(fold(n) for n in self.names.get(key, ()))
        return self._folded[key]

    def holds(self, folded: str, hop: FirstHop | None) -> bool:
        """Whether an entity folding to ``folded`` is on ``hop``'s side of its relation."""
        return hop is not None and folded in self._holders(hop.relation, hop.side)

    def lacking(self, hop: FirstHop | None) -> list[str]:
        """Entities of the hop's topic type that do not hold its relation, sorted."""
        if hop is None:
            return []
        return [n for n in self.of_type(hop.topic_type) if not self.holds(fold(n), hop)]

    @functools.cached_property
    def labels(self) -> frozenset[str]:
        """Every name in the file, folded."""
        return frozenset(fold(n) for names in self.names.values() for n in names)

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """Every word of every folded name."""
        return frozenset(w for label in self.labels for w in label.split())

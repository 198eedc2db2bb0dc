"""Load recipes: which files of a published dataset make its graph, and with which profile.

>>> RECIPES["fb15k-237"].profile
'freebase'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from middleware.errors import BadRequest


@dataclass(frozen=True)
class Recipe:
    """A dataset's graph: its files (relative to the datasets folder) and its profile."""

    name: str
    profile: str
    files: tuple[str, ...]
    description: str

    def paths(self, data_dir: Path) -> list[Path]:
        """The recipe's files under ``data_dir`` (the datasets root or the dataset's own
        folder); every missing file is named in one error."""
        folder = self.files[0].split("/", 1)[0]
        own_folder = data_dir.name == folder and not (data_dir / folder).is_dir()
        base = data_dir.parent if own_folder else data_dir
        found = [base / f for f in self.files]
        missing = [str(p) for p in found if not p.is_file()]
        if missing:
            raise BadRequest(
                f"recipe {self.name}: missing {', '.join(missing)}",
                hint=f"point --data-dir at the folder that holds {folder}/",
            )
        return found


RECIPES: dict[str, Recipe] = {
    recipe.name: recipe
    for recipe in (
        Recipe(
            "metaqa",
            "metaqa",
            ("metaqa/kb.txt",),
            "MetaQA's WikiMovies graph: 134k triples, names as entities",
        ),
        Recipe(
            "fb15k-237",
            "freebase",
            tuple(
                f"fb15k-237/{name}.txt"
                for name in ("train", "valid", "test", "entity2text", "relation2text")
            ),
            "FB15k-237 with entity names and relation texts: 310k triples, Freebase IRIs",
        ),
    )
}


def recipe(name: str) -> Recipe:
    found = RECIPES.get(name)
    if found is None:
        raise BadRequest(f"unknown recipe {name!r}", hint=f"use one of {', '.join(RECIPES)}")
    return found

"""A genre hub for mining tests: many films and a few named members, all of one genre."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from middleware.kg.backends.local import LocalStore


def genre_hub(
    folder: Path,
    base: str,
    films: int,
    members: Sequence[str] = ("Topic", "Gold"),
    extra: Sequence[str] = (),
) -> LocalStore:
    """A store on disk in ``folder``: ``films`` films and the ``members``, each with
    ``<base>genre <base>Drama``, and the ``extra`` N-Triples lines."""
    lines = [f"<{base}film{i:06d}> <{base}genre> <{base}Drama> ." for i in range(films)]
    lines += [f"<{base}{name}> <{base}genre> <{base}Drama> ." for name in members]
    path = folder / "hub.nt"
    path.write_text("\n".join([*lines, *extra]) + "\n")
    store = LocalStore(folder / "store", profile="generic")
    store.load([path])
    return store

"""A genre hub for mining tests: many films, a Topic and a Gold film, all of one genre."""

from __future__ import annotations

from pathlib import Path

from middleware.kg.backends.local import LocalStore


def genre_hub(folder: Path, base: str, films: int) -> LocalStore:
    """A store on disk in ``folder``: ``films`` films, then Topic and Gold, each with
    ``<base>genre <base>Drama``."""
    lines = [f"<{base}film{i:06d}> <{base}genre> <{base}Drama> ." for i in range(films)]
    lines += [
        f"<{base}Topic> <{base}genre> <{base}Drama> .",
        f"<{base}Gold> <{base}genre> <{base}Drama> .",
    ]
    path = folder / "hub.nt"
    path.write_text("\n".join(lines) + "\n")
    store = LocalStore(folder / "store", profile="generic")
    store.load([path])
    return store

"""What a ``--store`` folder holds, and the errors for folders that hold no store.

A kgmw store folder has ``kgmw-store.json`` and a ``current`` link to its live
generation (generations.py). A plain Oxigraph database (``pyoxigraph.Store(path)``,
``oxigraph load --location``) is a RocksDB folder: ``CURRENT``, ``IDENTITY``,
``MANIFEST-*``; it opens read-only. Only ``kgmw load`` creates a store, so a reader
given a missing or empty folder fails instead of making one.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pyoxigraph as ox

from middleware.errors import BadRequest, ConfigError, NotFound
from middleware.kg.backends.generations import CURRENT, META_FILE
from middleware.kg.profiles import Profile, load_profile
from middleware.support.locks import LockTimeout, file_lock

FolderKind = Literal["missing", "empty", "kgmw", "plain", "other"]


def store_path(path: str | os.PathLike[str]) -> Path:
    """A ``--store`` path, absolute; one that climbs out of a folder (``nope/../films``)
    is resolved, as the system cannot walk through a folder that is missing, and the
    store it names would read as missing.

    >>> store_path("/data/nope/../films").as_posix()
    '/data/films'
    """
    given = Path(path).expanduser().absolute()
    try:
        found = given.resolve() if ".." in given.parts else given
        broken = found.is_symlink() and not found.exists()  # dangling, or a loop
    except (OSError, RuntimeError):  # a loop on the way (Python 3.11 raises RuntimeError)
        broken = True
    if broken:
        raise BadRequest(
            f"store path {path} goes through a link that leads nowhere (dangling, or a loop)",
            hint="point the link at a folder, or give the store's folder itself",
        )
    return found


def folder_kind(path: Path) -> FolderKind:
    """What ``path`` holds; a file that is not a folder is a BadRequest."""
    if path.exists() and not path.is_dir():
        raise BadRequest(f"store path {path} is a file, not a directory")
    if not path.exists():
        return "missing"
    if (path / CURRENT).is_symlink() or (path / META_FILE).is_file():
        return "kgmw"
    if (path / "CURRENT").is_file() and any(path.glob("MANIFEST-*")):
        return "plain"
    return "other" if any(path.iterdir()) else "empty"


def read_meta(path: Path) -> dict[str, object]:
    """The store folder's metadata (profile, live generation); {} when it has none."""
    meta_path = path / META_FILE
    if not meta_path.is_file():
        return {}
    try:
        data = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ConfigError(f"{meta_path}: unreadable store metadata: {err}") from err
    return data if isinstance(data, dict) else {}


def no_store(path: Path, kind: FolderKind) -> NotFound:
    """The error a reader gets for a folder that holds no store."""
    create = f"create it with `kgmw load FILE --store {path}`, or check the path"
    if kind == "missing":
        return NotFound(f"no store at {path}", hint=create)
    return NotFound(f"{path} holds no store yet", hint=create)


def not_a_store(path: Path) -> BadRequest:
    return BadRequest(
        f"{path} is not a kgmw store directory",
        hint="use an empty or new directory, or wrap an open pyoxigraph Store",
    )


def plain_is_read_only(path: Path) -> BadRequest:
    return BadRequest(
        f"{path} is a plain Oxigraph database: kgmw opens it read-only",
        hint="load its data into a new kgmw store: `kgmw export --store OLD --format nq "
        "--out all.nq`, then `kgmw load all.nq --store NEW`",
    )


def profile_ref(given: str | Profile, profile: Profile) -> str:
    """How a store records its profile: a YAML file by its absolute path (so later
    commands find it from any folder), a bundled profile by its name."""
    if isinstance(given, str) and Path(given).suffix in {".yaml", ".yml"}:
        candidate = Path(given).expanduser()
        if candidate.is_file():
            return str(candidate.resolve())
    return profile.name


def remembered_name(ref: str) -> str:
    """The name of the profile a store recorded (its YAML file may have moved since)."""
    try:
        return load_profile(ref).name
    except NotFound:
        return ref


def check_profile(path: Path, asked: str | None) -> None:
    """A load into an existing store keeps the store's profile: another one would mix
    two ways of naming entities in one graph (and relabel the store), so it is refused."""
    if not asked or not path.is_dir():
        return
    stored = read_meta(path).get("profile")
    remembered = remembered_name(str(stored)) if stored else None
    wanted = load_profile(asked).name
    if remembered and remembered != wanted:
        raise BadRequest(
            f"store {path} was loaded with profile {remembered!r}, not {wanted!r}",
            hint="leave out --profile to load with the store's, or --replace to load the "
            "store anew under the new profile",
        )


def undo_first_load(folder: Path, made: Sequence[Path], *, remove: bool) -> None:
    """What a failed first load into ``folder`` left, unless another command has loaded
    the store meanwhile: checked under the store's lock, taken without waiting (a
    command loading it now owns it). The folder's contents go, and the folder itself
    where ``remove`` (it was made for this load); then each of ``made`` (the parents
    made for it, deepest first) while it is empty."""
    if folder.is_dir() and not folder.is_symlink():
        try:
            with file_lock(folder / ".lock", timeout=0):
                if holds_data(folder):
                    return
                for child in folder.iterdir():
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child, ignore_errors=True)
                    else:
                        child.unlink(missing_ok=True)
        except LockTimeout:
            return
        if remove:
            try:
                folder.rmdir()
            except OSError:
                return
    for parent in made:
        try:
            parent.rmdir()
        except OSError:
            break


def holds_data(folder: Path) -> bool:
    """Whether the store's live generation holds any triple (one read, not a count)."""
    live = folder / CURRENT
    if not live.is_dir():
        return False
    try:
        store = ox.Store.read_only(str(live))
    except OSError:
        return True  # unreadable: not this command's to remove
    return next(iter(store.quads_for_pattern(None, None, None)), None) is not None

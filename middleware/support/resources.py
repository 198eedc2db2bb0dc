"""Find the project's data folders (sparql/, mappings/, ontologies/, the sample graph).

In a source checkout they sit at the repository root; an installed wheel carries
them under ``middleware/_resources`` (see pyproject.toml).
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def resource_dir(name: str) -> Path:
    """Directory ``name`` (``"sparql"``, ``"mappings"``, ``"ontologies"``).

    >>> (resource_dir("sparql") / "paths_2.rq").is_file()
    True
    """
    for candidate in (_PACKAGE / "_resources" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"resource folder {name!r} is missing from this installation")


def data_file(name: str) -> Path:
    """A file shipped inside the package (``middleware/data``)."""
    return _PACKAGE / "data" / name

"""A reader's label index follows a load that another process swapped in, even when
linking is the first thing asked of it, and the swap costs one rebuild."""

from __future__ import annotations

from pathlib import Path

import pytest

from middleware.kg.backends.local import LocalStore
from middleware.text import stored_labels as module
from middleware.text.stored_labels import label_index

EX = "http://example.org/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def test_a_reader_links_a_name_another_process_just_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = LocalStore(tmp_path / "store")
    writer.load_text(f'<{EX}a> <{LABEL}> "Titanic" .', name="one.nt", format="nt")
    reader = LocalStore(tmp_path / "store", read_only=True)
    assert label_index(reader).hits("titanic")
    writer.load_text(f'<{EX}b> <{LABEL}> "Avatar" .', name="two.nt", format="nt")
    built = []
    real = module.build
    monkeypatch.setattr(module, "build", lambda *a, **k: built.append(1) or real(*a, **k))
    assert label_index(reader).hits("avatar")  # linking first: no query ran since
    assert label_index(reader).hits("avatar")
    assert len(built) == 1  # one rebuild for one swap

from __future__ import annotations

from pathlib import Path

from middleware.kg.sample import sample_store, sample_store_dir
from middleware.text.linking import EntityLinker


def test_sample_loads_once_into_the_cache(tmp_path: Path) -> None:
    store = sample_store(cache_dir=str(tmp_path))
    assert len(store) > 40_000 and store.profile.name == "metaqa" and store.read_only
    assert sample_store_dir(str(tmp_path)).is_dir()
    generation = (sample_store_dir(str(tmp_path)) / "current").resolve()
    again = sample_store(cache_dir=str(tmp_path))
    assert (sample_store_dir(str(tmp_path)) / "current").resolve() == generation
    assert len(again) == len(store)


def test_sample_has_multi_hop_paths(tmp_path: Path) -> None:
    store = sample_store(cache_dir=str(tmp_path))
    linker = EntityLinker(store)
    cameron, winslet = linker.best("James Cameron"), linker.best("Kate Winslet")
    assert cameron and winslet
    assert any(len(p) == 2 for p in store.paths(cameron.iri, winslet.iri, max_hops=2))
    avatar = linker.best("Avatar")
    assert avatar and store.paths(avatar.iri, winslet.iri, max_hops=3)

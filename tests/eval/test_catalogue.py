"""The catalogue of published files: it lays out every file the loaders and recipes
read, once, and records a checksum only as a SHA-256 (or says why there is none)."""

from __future__ import annotations

import re
from collections import Counter

from middleware.eval.catalogue import CATALOGUE
from middleware.eval.datasets import DATASETS
from middleware.kg.recipes import RECIPES

_SHA256 = re.compile(r"[0-9a-f]{64}")


def test_every_file_eval_and_load_read_is_laid_out_once() -> None:
    laid_out = Counter(t for source in CATALOGUE.values() for t in source.targets)
    assert max(laid_out.values()) == 1
    read = {f for spec in DATASETS.values() for f in spec.files.values()}
    read |= {f for recipe in RECIPES.values() for f in recipe.files}
    assert read <= set(laid_out), read - set(laid_out)


def test_checksums_are_sha256_or_absent_with_a_reason() -> None:
    for source in CATALOGUE.values():
        for item in source.downloads:
            assert item.sha256 is None or _SHA256.fullmatch(item.sha256), item
            assert item.origin, item
            assert bool(item.put_at) != bool(item.members), item
            assert item.mirror_path.startswith(f"{source.name}/"), item
            assert item.url is None or item.url.startswith("https://"), item
            if item.url is None:
                assert source.note, f"{source.name}: no URL and no steps by hand"
        if source.official is not None:
            assert source.official.sha256 is None or _SHA256.fullmatch(source.official.sha256)
            assert source.official.note

"""Old import path; the bundled sample graph lives in :mod:`middleware.kg.sample`."""

from middleware.kg.sample import SAMPLE_FILE, sample_store, sample_store_dir

__all__ = ["SAMPLE_FILE", "sample_store", "sample_store_dir"]

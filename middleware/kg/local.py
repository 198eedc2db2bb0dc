"""Old import path; the backend lives in :mod:`middleware.kg.backends.local`."""

from middleware.kg.backends.generations import CURRENT, META_FILE
from middleware.kg.backends.local import LocalStore
from middleware.kg.loading import LoadReport

__all__ = ["CURRENT", "META_FILE", "LoadReport", "LocalStore"]

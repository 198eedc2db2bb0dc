"""Old import path; the backend lives in :mod:`middleware.kg.backends.local`."""

from middleware.kg.backends.local import CURRENT, META_FILE, LoadReport, LocalStore

__all__ = ["CURRENT", "META_FILE", "LoadReport", "LocalStore"]

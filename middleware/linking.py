"""Old import path; entity linking lives in :mod:`middleware.text.linking`."""

from middleware.text.folding import fold
from middleware.text.linking import EntityLinker

__all__ = ["EntityLinker", "fold"]

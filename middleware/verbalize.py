"""Old import path; verbalization lives in :mod:`middleware.text.verbalize`."""

from middleware.text.verbalize import Verbalizer, local_name

__all__ = ["Verbalizer", "local_name"]

"""Text around the graph: folding, entity linking, verbalization, embeddings."""

from middleware.text.folding import fold
from middleware.text.linking import EntityLinker
from middleware.text.verbalize import Verbalizer, local_name

__all__ = ["EntityLinker", "Verbalizer", "fold", "local_name"]

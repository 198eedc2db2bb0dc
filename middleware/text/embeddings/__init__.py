"""Encoders, the on-disk vector cache and the cosine index (DESIGN.md's ``embeddings``)."""

from middleware.text.embeddings.cache import CachedEncoder, EmbeddingCache
from middleware.text.embeddings.encoders import (
    DEFAULT_ENCODER,
    Encoder,
    HashEncoder,
    SentenceEncoder,
    normalize,
)
from middleware.text.embeddings.factory import open_encoder
from middleware.text.embeddings.index import Hit, VectorIndex

__all__ = [
    "DEFAULT_ENCODER",
    "CachedEncoder",
    "EmbeddingCache",
    "Encoder",
    "HashEncoder",
    "Hit",
    "SentenceEncoder",
    "VectorIndex",
    "normalize",
    "open_encoder",
]

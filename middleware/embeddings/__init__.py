"""Old import path; encoders, the vector cache and index live in :mod:`middleware.text.embeddings`."""

from middleware.text.embeddings import (
    DEFAULT_ENCODER,
    CachedEncoder,
    EmbeddingCache,
    Encoder,
    HashEncoder,
    Hit,
    SentenceEncoder,
    VectorIndex,
    normalize,
    open_encoder,
)

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

"""The encoder the settings ask for, behind the on-disk cache when it is on."""

from __future__ import annotations

from middleware.config import Settings
from middleware.errors import ConfigError
from middleware.support.cache_dir import cache_root
from middleware.text.embeddings.cache import CachedEncoder, EmbeddingCache
from middleware.text.embeddings.encoders import Encoder, HashEncoder, SentenceEncoder


def embedding_cache_path(settings: Settings) -> str:
    return str(cache_root(settings.cache_dir) / "embeddings.sqlite")


def open_encoder(settings: Settings) -> Encoder:
    """``hash`` or ``hash-N`` gives the hash encoder; anything else a sentence-transformers model."""
    name = str(settings.encoder)
    encoder: Encoder
    if name == "hash" or name.startswith("hash-"):
        size = name.split("-", 1)[1] if "-" in name else "256"
        if not size.isdigit() or int(size) < 1:
            raise ConfigError(f"encoder {name!r}: the hash encoder's size must be a number")
        encoder = HashEncoder(dim=int(size))
    else:
        encoder = SentenceEncoder(name, batch_size=settings.encoder_batch_size)
    if settings.encoder_cache:
        return CachedEncoder(
            encoder,
            EmbeddingCache(embedding_cache_path(settings)),
            batch_size=settings.encoder_batch_size,
            progress=settings.progress,
        )
    return encoder

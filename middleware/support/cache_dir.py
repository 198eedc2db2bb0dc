"""Where the middleware keeps what it builds: the user cache directory or ``cache_dir``."""

from __future__ import annotations

from pathlib import Path

import platformdirs


def cache_root(cache_dir: str | None = None) -> Path:
    """``cache_dir`` if set (``~`` expanded), else the platform's user cache for kgmw."""
    return Path(cache_dir).expanduser() if cache_dir else Path(platformdirs.user_cache_dir("kgmw"))

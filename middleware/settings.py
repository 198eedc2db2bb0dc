"""Old import path of the settings; they live in :mod:`middleware.config` now."""

from middleware.config import REGISTRY, SETTINGS, Setting, Settings

__all__ = ["REGISTRY", "SETTINGS", "Setting", "Settings"]

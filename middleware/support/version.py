"""The package's version and the User-Agent it sends by default.

Public endpoints ask clients to say who they are: Wikimedia's User-Agent policy (which
the Wikidata Query Service enforces with 403) wants a tool name, its version and a
contact, which the default gives (the project's URL); deployments should add their own.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    """The installed kg-middleware version ("0+unknown" when run from a bare checkout)."""
    try:
        return version("kg-middleware")
    except PackageNotFoundError:
        return "0+unknown"


def default_user_agent() -> str:
    """``kg-middleware/VERSION (+https://kgmw.dev)``."""
    return f"kg-middleware/{package_version()} (+https://kgmw.dev)"

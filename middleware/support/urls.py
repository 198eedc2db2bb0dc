"""URLs with credentials in them (``https://user:password@host/sparql``): split off the
credentials, so only the bare URL is ever shown.

>>> split_credentials("https://al%40ice:p%3Ass@example.org:8890/sparql?x=1")
('https://example.org:8890/sparql?x=1', 'al@ice', 'p:ss')
>>> without_credentials("http://u:p@[::1]:7878/query")
'http://[::1]:7878/query'
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its user name and password, and the two (decoded; None if absent)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, colon, password = userinfo.partition(":")
    bare = urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment))
    return bare, unquote(user) or None, unquote(password) if colon else None


def without_credentials(url: str) -> str:
    """``url`` with any user name and password left out."""
    return split_credentials(url)[0]

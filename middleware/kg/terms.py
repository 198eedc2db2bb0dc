"""RDF terms: turning user text into validated pyoxigraph terms, and back to text."""

from __future__ import annotations

from typing import TypeAlias

from pyoxigraph import BlankNode, Literal, NamedNode

from middleware.errors import BadRequest

Term: TypeAlias = NamedNode | BlankNode | Literal
Node: TypeAlias = NamedNode | BlankNode

MAX_IRI_CHARS = 4096


def to_iri(value: str | NamedNode) -> NamedNode:
    """Validate ``value`` as an absolute IRI; ``<...>`` brackets are accepted.

    >>> to_iri("<http://example.org/a>")
    <NamedNode value=http://example.org/a>
    >>> to_iri("not an iri")
    Traceback (most recent call last):
    ...
    middleware.errors.BadRequest: not a valid IRI: 'not an iri' (Invalid IRI code point ' ')
    """
    if isinstance(value, NamedNode):
        return value
    text = value.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if len(text) > MAX_IRI_CHARS:
        raise BadRequest(f"IRI of {len(text)} characters is longer than {MAX_IRI_CHARS}")
    try:
        return NamedNode(text)
    except ValueError as err:
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise BadRequest(f"not a valid IRI: {shown!r}", hint=str(err)) from err


def looks_like_iri(text: str) -> bool:
    """True when ``text`` is meant as an IRI rather than a label.

    >>> looks_like_iri("http://x.org/a"), looks_like_iri("<urn:a>"), looks_like_iri("Titanic")
    (True, True, False)
    """
    text = text.strip()
    if text.startswith("<") and text.endswith(">"):
        return True
    head, sep, _ = text.partition(":")
    return (
        bool(sep)
        and head.isascii()
        and head.isalpha()
        and " " not in text
        and (head.lower() in {"http", "https", "urn", "file", "ftp", "tag", "mailto"})
    )


def term_key(term: Term) -> str:
    """A stable sort key (N-Triples form)."""
    return str(term)

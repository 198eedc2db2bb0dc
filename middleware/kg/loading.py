"""Read RDF files and delimited triple files into pyoxigraph quads.

Formats: N-Triples, N-Quads, Turtle, TriG, N3, RDF/XML, JSON-LD (pyoxigraph's
parsers), TriX and HexT (rdflib), and delimited ``s|r|o`` / tab-separated rows
mapped to IRIs by a profile. ``.gz`` files are read transparently. Every parse
error becomes a :class:`LoadError` naming ``file:line``.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox
from pyoxigraph import Literal, NamedNode, Quad
from tqdm import tqdm

from middleware.errors import BadRequest, LoadError
from middleware.kg.backends.rdflib_graph import to_oxigraph
from middleware.kg.load_guard import DEFAULT_CAPS, LoadCaps, open_guarded, stopped_by
from middleware.kg.profiles import RDFS_LABEL, DelimitedMapping, Profile
from middleware.support.progress_bar import progress_bar

RDF_FORMATS: dict[str, ox.RdfFormat] = {
    "nt": ox.RdfFormat.N_TRIPLES,
    "nq": ox.RdfFormat.N_QUADS,
    "ttl": ox.RdfFormat.TURTLE,
    "trig": ox.RdfFormat.TRIG,
    "n3": ox.RdfFormat.N3,
    "rdfxml": ox.RdfFormat.RDF_XML,
    "jsonld": ox.RdfFormat.JSON_LD,
}
RDFLIB_FORMATS = {"trix": "trix", "hext": "hext"}
FORMATS = (*RDF_FORMATS, *RDFLIB_FORMATS, "delimited")
_EXTENSIONS = {
    ".nt": "nt",
    ".ntriples": "nt",
    ".nq": "nq",
    ".ttl": "ttl",
    ".turtle": "ttl",
    ".trig": "trig",
    ".n3": "n3",
    ".rdf": "rdfxml",
    ".owl": "rdfxml",
    ".xml": "rdfxml",
    ".jsonld": "jsonld",
    ".json": "jsonld",
    ".trix": "trix",
    ".hext": "hext",
    ".txt": "delimited",
    ".tsv": "delimited",
    ".psv": "delimited",
}


def load_bar(progress: bool) -> tqdm[Any]:
    """The progress bar of a load (triples read), shown when ``progress``."""
    return progress_bar(
        unit=" triples", unit_scale=True, disable=not progress, smoothing=0.1, mininterval=0.5
    )


def detect_format(path: Path, explicit: str | None = None) -> str:
    """The format name for ``path``: ``explicit`` if given, else from its extension.

    >>> detect_format(Path("kb.txt.gz")), detect_format(Path("a.ttl")), detect_format(Path("x"), "nt")
    ('delimited', 'ttl', 'nt')
    """
    if explicit:
        if explicit not in FORMATS:
            raise BadRequest(
                f"unknown format {explicit!r}", hint=f"use one of {', '.join(FORMATS)}"
            )
        return explicit
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _EXTENSIONS:
        return _EXTENSIONS[suffixes[-1]]
    raise BadRequest(
        f"{path}: cannot tell the format from the file name",
        hint=f"pass --format (one of {', '.join(FORMATS)})",
    )


@dataclass(frozen=True)
class Source:
    """One input file and how to read it."""

    path: Path
    format: str
    caps: LoadCaps = DEFAULT_CAPS


def read_quads(source: Source, profile: Profile) -> Iterator[Quad]:
    """Yield the quads of one file; raise LoadError with file:line on bad input."""
    if source.format == "delimited":
        mapping = profile.delimited or _generic_mapping()
        yield from read_delimited(source.path, mapping, profile, source.caps)
    elif source.format in RDFLIB_FORMATS:
        yield from _read_with_rdflib(source)
    else:
        yield from _read_with_oxigraph(source)


def _read_with_oxigraph(source: Source) -> Iterator[Quad]:
    fmt = RDF_FORMATS[source.format]
    base = source.path.resolve().as_uri()
    with open_guarded(source.path, source.format, caps=source.caps) as handle:
        try:
            yield from ox.parse(handle, fmt, base_iri=base)
        except (SyntaxError, OSError, EOFError, gzip.BadGzipFile, LoadError) as err:
            if (cap := stopped_by(handle)) is not None:
                raise cap from None
            _reraise(source, err)


def _reraise(source: Source, err: BaseException) -> None:
    """A parser's error as a LoadError naming file:line."""
    if isinstance(err, LoadError):
        raise err
    if isinstance(err, SyntaxError):
        what = str(err.msg or err)
        raise LoadError(str(source.path), err.lineno, f"{source.format}: {what}") from err
    raise LoadError(str(source.path), None, f"cannot read: {err}") from err


def _read_with_rdflib(source: Source) -> Iterator[Quad]:
    import rdflib

    dataset = rdflib.Dataset()
    with open_guarded(source.path, source.format, whole=True, caps=source.caps) as handle:
        data = handle.read()  # a cap stops this with a LoadError
        try:
            dataset.parse(io.BytesIO(data), format=RDFLIB_FORMATS[source.format])
        except Exception as err:  # rdflib parsers raise many unrelated exception types
            line = getattr(err, "lineno", None) or getattr(err, "line", None)
            raise LoadError(
                str(source.path), line if isinstance(line, int) else None, str(err)
            ) from err
    for s, p, o, g in dataset.quads():
        subject, predicate, obj = to_oxigraph(s), to_oxigraph(p), to_oxigraph(o)
        graph = to_oxigraph(g) if g is not None and str(g) != _RDFLIB_DEFAULT_GRAPH else None
        if isinstance(subject, Literal) or not isinstance(predicate, NamedNode):
            raise LoadError(str(source.path), None, f"invalid triple ({s}, {p}, {o})")
        if isinstance(graph, Literal):
            raise LoadError(str(source.path), None, f"a literal cannot name a graph: {g}")
        yield Quad(subject, predicate, obj, graph)


_RDFLIB_DEFAULT_GRAPH = "urn:x-rdflib:default"


def _generic_mapping() -> DelimitedMapping:
    return DelimitedMapping(
        entity_iri="https://kgmw.dev/entity/{key}",
        relation_iri="https://kgmw.dev/relation/{key}",
        label_entities=True,
    )


def read_delimited(
    path: Path, mapping: DelimitedMapping, profile: Profile, caps: LoadCaps = DEFAULT_CAPS
) -> Iterator[Quad]:
    """Rows of ``subject<SEP>relation<SEP>object`` (separator ``|`` or tab, detected per file).

    Two-column rows ``name<SEP>text`` label an entity, or a relation already seen in
    this file or named by the mapping. Blank lines and ``#`` comments are skipped.
    """
    label = profile.label_predicates[0] if profile.label_predicates else NamedNode(RDFS_LABEL)
    entities: dict[str, NamedNode] = {}
    relations: dict[str, NamedNode] = {}
    labelled: set[str] = set()
    separator: str | None = None
    with open_guarded(path, "delimited", caps=caps) as raw:
        number = 0
        try:
            for number, data in enumerate(raw, start=1):
                row = data.decode("utf-8").rstrip("\r\n")
                if not row.strip() or row.startswith("#"):
                    continue
                if separator is None:
                    separator = "\t" if "\t" in row else "|"
                parts = row.split(separator)
                if len(parts) == 3:
                    s, r, o = (part.strip() for part in parts)
                    if not (s and r and o):
                        raise LoadError(str(path), number, f"empty field in {row!r}")
                    subject = _named(entities, s, mapping.entity, path, number)
                    predicate = _named(relations, r, mapping.relation, path, number)
                    obj = _named(entities, o, mapping.entity, path, number)
                    yield Quad(subject, predicate, obj)
                    if mapping.label_entities:
                        for name, node in ((s, subject), (o, obj)):
                            if name not in labelled:
                                labelled.add(name)
                                yield Quad(node, label, Literal(name))
                elif len(parts) == 2:
                    name, text_value = parts[0].strip(), parts[1].strip()
                    if not (name and text_value):
                        raise LoadError(str(path), number, f"empty field in {row!r}")
                    is_relation = name in relations or (
                        mapping.encode == "dotted" and not name.startswith(("/m/", "/g/"))
                    )
                    node = (
                        _named(relations, name, mapping.relation, path, number)
                        if is_relation
                        else _named(entities, name, mapping.entity, path, number)
                    )
                    yield Quad(node, label, Literal(text_value))
                else:
                    sep_name = "tab" if separator == "\t" else repr(separator)
                    raise LoadError(
                        str(path),
                        number,
                        f"expected 3 fields separated by {sep_name} (or 2 for a label), found {len(parts)}",
                        hint="each line must be subject|relation|object",
                    )
        except UnicodeDecodeError as err:
            raise LoadError(str(path), number, f"not UTF-8 text: {err.reason}") from err
        except (OSError, EOFError) as err:
            raise LoadError(str(path), number or None, f"cannot read: {err}") from err


def _named(
    cache: dict[str, NamedNode], name: str, template: object, path: Path, line: int
) -> NamedNode:
    node = cache.get(name)
    if node is None:
        iri = template(name)  # type: ignore[operator]
        try:
            node = NamedNode(iri)
        except ValueError as err:
            raise LoadError(
                str(path), line, f"{name!r} does not map to a valid IRI: {err}"
            ) from err
        cache[name] = node
    return node


class QuadCounter:
    """Counts the quads that pass through ``count``."""

    def __init__(self) -> None:
        self.total = 0

    def count(self, quads: Iterable[Quad]) -> Iterator[Quad]:
        for quad in quads:
            self.total += 1
            yield quad


@dataclass(frozen=True)
class LoadReport:
    files: tuple[str, ...]
    quads_read: int
    quads_added: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.quads_read / self.seconds if self.seconds > 0 else float("inf")

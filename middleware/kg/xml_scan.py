"""A streaming check of XML input (RDF/XML, TriX) before its RDF parser reads the bytes.

pyoxigraph's RDF/XML parser and rdflib's TriX parser expand the internal entities a
DOCTYPE declares (billion laughs) and slow down quadratically with element depth, with
no cap of their own. :class:`XmlScan` tokenizes the same bytes with expat, chunk by
chunk, and refuses with a :class:`~middleware.errors.LoadError` naming the file and
line:

- a DOCTYPE before the root element (a DOCTYPE anywhere else is not well-formed);
- elements nested deeper than ``max_depth`` (``load_max_xml_depth``);
- input that is not well-formed XML.

Expat never expands an entity here: the scan stops at the DOCTYPE, before any
declaration, and refuses an entity declaration too should one ever reach it.

>>> scan = XmlScan("g.rdf", max_depth=2)
>>> scan.feed(b"<a><b/>"); scan.feed(b"</a>"); scan.close()
>>> XmlScan("g.rdf", max_depth=2).feed(b"<a><b><c/></b></a>")
Traceback (most recent call last):
...
middleware.errors.LoadError: g.rdf:1: nests XML elements deeper than 2 levels ...
>>> XmlScan("g.rdf", max_depth=2).feed(b'<!-- note -->\\n<!DOCTYPE a [<!ENTITY e "x">]>')
Traceback (most recent call last):
...
middleware.errors.LoadError: g.rdf:2: has a DOCTYPE declaration ...
"""

from __future__ import annotations

import xml.parsers.expat
from typing import NoReturn

from middleware.errors import LoadError

DTD_HINT = (
    "a DTD is never loaded, since its entities can expand without bound: expand the "
    "entities first, e.g. by converting the file to N-Triples with another tool"
)


class XmlScan:
    """Feed it an XML document's bytes in order; it raises when they must not pass on."""

    def __init__(self, name: str, max_depth: int) -> None:
        self.name = name
        self.max_depth = max_depth
        self.depth = 0
        self.closed = False
        parser = xml.parsers.expat.ParserCreate()
        parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartDoctypeDeclHandler = self._doctype
        parser.EntityDeclHandler = self._entity
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        if hasattr(parser, "SetReparseDeferralEnabled"):
            # expat >= 2.6 may hold a chunk back unparsed; every byte passed on must be seen
            parser.SetReparseDeferralEnabled(False)
        self.parser = parser

    def feed(self, chunk: bytes) -> None:
        """Check the next bytes; raise LoadError if they must not reach the parser."""
        self._parse(chunk, final=False)

    def close(self) -> None:
        """The input ended: refuse it if the document is unfinished."""
        if not self.closed:
            self.closed = True
            self._parse(b"", final=True)

    def _parse(self, data: bytes, *, final: bool) -> None:
        try:
            self.parser.Parse(data, final)
        except xml.parsers.expat.ExpatError as err:
            what = xml.parsers.expat.ErrorString(err.code) or "error"
            self._refuse(
                f"is not well-formed XML: {what} at column {err.offset + 1}",
                "an RDF/XML or TriX file must be one well-formed XML document",
                int(err.lineno),
            )

    def _doctype(self, *_: object) -> None:
        self._refuse("has a DOCTYPE declaration", DTD_HINT)

    def _entity(self, *_: object) -> None:
        self._refuse("declares an XML entity", DTD_HINT)

    def _start(self, name: str, attributes: object) -> None:
        self.depth += 1
        if self.depth > self.max_depth:
            self._refuse(
                f"nests XML elements deeper than {self.max_depth} levels",
                "RDF/XML and TriX need only a few levels: flatten the nesting or convert "
                "the file to N-Triples, or raise load_max_xml_depth",
            )

    def _end(self, name: str) -> None:
        self.depth -= 1

    def _refuse(self, what: str, hint: str, line: int | None = None) -> NoReturn:
        where = self.parser.CurrentLineNumber if line is None else line
        raise LoadError(self.name, where, what, hint=hint)

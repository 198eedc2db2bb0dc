"""Generated spellings of a federated query that calls one address, and a listener that
counts the connections made to it: for fuzzing the promise that caller SPARQL cannot
reach the network, whatever the text says.

``spellings(host, port, count, seed=...)`` yields ``count`` distinct query texts, each
of which some SPARQL reader could take as a ``SERVICE`` call to ``http://host:port/``:
the keyword in any case, glued to what follows, escaped, behind comments; the endpoint
as an IRI (absolute, relative to a BASE, escaped, other spellings of the address), a
prefixed name (prefixes that begin with SERVICE or SILENT among them) or a variable;
the clause nested in OPTIONAL, UNION, MINUS, GRAPH, EXISTS, subqueries, beside
property paths (each cheap to run, so a fuzz run spends its time on the spellings).
The same seed gives the same texts.

>>> texts = list(spellings("127.0.0.1", 9911, 50, seed=1))
>>> len(texts), len(set(texts)), all("9911" in t or "2130706433" in t or "7f" in t for t in texts)
(50, 50, True)
"""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Iterator

_ESCAPED = {c: f"\\u{ord(c):04X}" for c in "SERVICEILNTservicelnt<>:/"}


def _case(word: str, rng: random.Random) -> str:
    form = rng.randrange(4)
    if form == 0:
        return word.upper()
    if form == 1:
        return word.lower()
    if form == 2:
        return word.capitalize()
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in word)


def _escape_some(word: str, rng: random.Random) -> str:
    return "".join(_ESCAPED[c] if c in _ESCAPED and rng.random() < 0.3 else c for c in word)


def _gap(rng: random.Random) -> str:
    return rng.choice(["", " ", "  ", "\n", "\t", " # note\n", "#x\n", "\r\n", " \u000b"])


def _keyword(word: str, rng: random.Random) -> str:
    spelled = _case(word, rng)
    return _escape_some(spelled, rng) if rng.random() < 0.15 else spelled


def _addresses(host: str, port: int) -> list[str]:
    found = [f"{host}:{port}"]
    if host == "127.0.0.1":
        found += [
            f"localhost:{port}",
            f"127.1:{port}",
            f"2130706433:{port}",
            f"0x7f000001:{port}",
            f"0177.0.0.1:{port}",
            f"127.0.0.1:0{port}",
            f"user@127.0.0.1:{port}",
        ]
    return found


def _endpoint(host: str, port: int, rng: random.Random) -> tuple[str, str]:
    """(prologue, how the clause names the endpoint)."""
    address = rng.choice(_addresses(host, port))
    path = rng.choice(["", "x", "sparql", "a/b?c=d", "%73parql"])
    url = f"http://{address}/{path}"
    form = rng.randrange(9)
    if form == 0:
        return "", f"<{url}>"
    if form == 1:  # escaped characters inside the IRI
        return "", "<" + _escape_some(url, rng) + ">"
    if form == 2:  # relative to a BASE
        return f"BASE <http://{address}/>\n", f"<{path}>"
    if form == 3:  # a prefixed name
        name = rng.choice(["ex", "e", "a1", "svc", "s_x"])
        return f"PREFIX {name}: <http://{address}/>\n", f"{name}:{path.split('?')[0]}"
    if form == 4:  # a prefix that begins with a keyword
        name = _case(rng.choice(["SERVICEex", "SILENTx", "SERVICE_", "SILENT1", "serviceS"]), rng)
        return f"PREFIX {name}: <http://{address}/>\n", f"{name}:{path.split('?')[0]}"
    if form == 5:  # the empty prefix
        return f"PREFIX : <http://{address}/>\n", f":{path.split('?')[0]}"
    if form == 6:  # a variable bound by VALUES
        return "", f"?e{{VALUES ?e {{ <{url}> }}}}"
    if form == 7:  # an escaped angle bracket opening the IRI
        return "", f"\\u003C{url}\\u003E"
    return f"BASE <{url}>\n", "<>"


def _wrap(clause: str, rng: random.Random) -> str:
    for _ in range(rng.randrange(3)):
        form = rng.randrange(8)
        if form == 0:
            clause = f"OPTIONAL {{ {clause} }}"
        elif form == 1:
            clause = f"{{ {clause} }} UNION {{ BIND(1 AS ?u) }}"
        elif form == 2:
            clause = f"{{ SELECT * WHERE {{ {clause} }} }}"
        elif form == 3:
            clause = f"GRAPH ?g {{ {clause} }}"
        elif form == 4:
            clause = f"VALUES ?x {{ 1 }} MINUS {{ {clause} }}"
        elif form == 5:
            clause = f"BIND(1 AS ?x) FILTER EXISTS {{ {clause} }}"
        elif form == 6:
            clause = f"<http://e/a> <http://e/p>/<http://e/q>* ?o . {clause}"
        else:
            clause = f"{{ {clause} }}"
    return clause


def _form(body: str, rng: random.Random) -> str:
    form = rng.randrange(4)
    if form == 0:
        return f"SELECT * WHERE {{ {body} }}"
    if form == 1:
        return f"ASK {{ {body} }}"
    if form == 2:
        return f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ {body} }}"
    return f"SELECT ?s WHERE {{ {body} }} LIMIT 1"


def spelling(host: str, port: int, rng: random.Random) -> str:
    """One query text calling ``http://host:port/`` in some spelling."""
    prologue, target = _endpoint(host, port, rng)
    if target.startswith("?e{"):  # a variable endpoint and the VALUES that binds it
        values = target[2:]
        target = "?e"
    else:
        values = ""
    silent = ""
    if rng.random() < 0.5:
        silent = _gap(rng) + _keyword("SILENT", rng)
    keyword = _keyword("SERVICE", rng)
    clause = f"{values} {keyword}{silent}{_gap(rng)}{target}{_gap(rng)}{{ ?s ?p ?o }}"
    return prologue + _form(_wrap(clause, rng), rng)


def spellings(host: str, port: int, count: int, *, seed: int = 0) -> Iterator[str]:
    """``count`` distinct spellings (seeded: the same every run)."""
    rng = random.Random(seed)
    seen: set[str] = set()
    tries = 0
    while len(seen) < count:
        tries += 1
        if tries > count * 50:
            raise ValueError(f"only {len(seen)} distinct spellings after {tries} tries")
        text = spelling(host, port, rng)
        if text not in seen:
            seen.add(text)
            yield text


class Listener:
    """A TCP socket on 127.0.0.1 that counts the connections it accepts (and closes them)."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.port: int = self.socket.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/sparql"

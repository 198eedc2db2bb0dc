"""The engine's solutions read into rows: values by variable, unbound ones left out."""

from __future__ import annotations

import time

import pyoxigraph as ox
import pytest

from middleware.errors import EndpointTimeout
from middleware.kg.backends.engine_rows import read_result

EX = "http://example.org/"


def _store() -> ox.Store:
    store = ox.Store()
    a, p, q = (ox.NamedNode(EX + n) for n in ("a", "p", "q"))
    store.add(ox.Quad(a, p, ox.NamedNode(EX + "b")))
    store.add(ox.Quad(a, p, ox.Literal("c")))
    store.add(ox.Quad(ox.NamedNode(EX + "b"), q, ox.NamedNode(EX + "d")))
    return store


QUERY = f"""SELECT ?o ?missing ?next WHERE {{
  <{EX}a> <{EX}p> ?o OPTIONAL {{ ?o <{EX}q> ?next }} OPTIONAL {{ ?o <{EX}none> ?missing }}
}} ORDER BY ?o"""


def test_rows_hold_each_bound_value_under_its_variable() -> None:
    read = read_result(
        _store().query(QUERY), deadline=time.monotonic() + 60, max_rows=None, source="s"
    )
    assert read.variables == ["o", "missing", "next"]
    assert read.rows == [  # IRIs sort before literals
        {"o": ox.NamedNode(EX + "b"), "next": ox.NamedNode(EX + "d")},
        {"o": ox.Literal("c")},
    ]
    assert not read.truncated


def test_rows_past_the_cap_are_cut_and_said_to_be() -> None:
    read = read_result(
        _store().query(QUERY), deadline=time.monotonic() + 60, max_rows=1, source="s"
    )
    assert read.rows == [{"o": ox.NamedNode(EX + "b"), "next": ox.NamedNode(EX + "d")}]
    assert read.truncated


def test_a_deadline_already_past_stops_the_read() -> None:
    with pytest.raises(EndpointTimeout, match="ran past its timeout"):
        read_result(_store().query(QUERY), deadline=time.monotonic() - 1, max_rows=None, source="s")

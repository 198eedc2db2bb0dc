"""Every LIMIT in a SPARQL template cuts ordered rows: two engines holding the same graph
then cut the same rows, so their evidence agrees (benchmarks/bench_virtuoso_identity.py).

A LIMIT needs an ORDER BY among the solution modifiers of its own (sub)query: between
the brace that closes that query's WHERE and the LIMIT. The one exception is a LIMIT
whose line ends in a ``# any rows:`` comment saying why the rows cut do not matter
(a sample for statistics, an existence probe whose value is not read).
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import pytest

from middleware.kg.sparql_templates import Rendered, TemplateSet

SPARQL = Path(__file__).resolve().parents[2] / "sparql"
TEMPLATES = sorted(SPARQL.rglob("*.rq"))
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}")
_STRING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")
_COMMENT = re.compile(r"#[^\n]*")
_IRI = re.compile(r"<[^<>\s]*>")


def unordered_limits(text: str) -> list[str]:
    """The lines of ``text`` holding a LIMIT with no ORDER BY in its own query."""
    found = []
    lines = text.splitlines()
    flat = "\n".join(
        _COMMENT.sub("", _IRI.sub("<>", _STRING.sub('""', _PLACEHOLDER.sub("X", line))))
        for line in lines
    )
    for match in re.finditer(r"\bLIMIT\b", flat, re.IGNORECASE):
        line = flat.count("\n", 0, match.start())
        if "# any rows:" in lines[line]:
            continue
        modifiers = flat[flat.rfind("}", 0, match.start()) + 1 : match.start()]
        if not re.search(r"\bORDER\s+BY\b", modifiers, re.IGNORECASE):
            found.append(lines[line].strip())
    return found


def test_the_check_sees_both_kinds() -> None:
    assert unordered_limits("SELECT ?x WHERE { ?x ?p ?o }\nLIMIT 5") == ["LIMIT 5"]
    assert unordered_limits("SELECT ?x WHERE { ?x ?p ?o }\nORDER BY ?x\nLIMIT 5") == []
    inner = "SELECT ?x WHERE {\n { SELECT ?x WHERE { ?x ?p ?o } LIMIT 9 }\n}\nORDER BY ?x"
    assert unordered_limits(inner) == ["{ SELECT ?x WHERE { ?x ?p ?o } LIMIT 9 }"]
    assert unordered_limits(inner.replace("LIMIT 9 }", "LIMIT 9 }  # any rows: a sample")) == []
    # an ORDER BY of the outer query does not order an inner query's cut, and a LIMIT
    # or ORDER BY in a comment, string or placeholder is no keyword
    nested = "SELECT ?x WHERE { { SELECT ?x WHERE { ?x ?p 'ORDER BY' } LIMIT 2 } } ORDER BY ?x"
    assert unordered_limits(nested) != []
    assert unordered_limits("# LIMIT 3\nASK { ?s ?p {{limit}} }") == []


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(SPARQL)))
def test_every_limit_is_ordered(template: Path) -> None:
    assert not unordered_limits(template.read_text(encoding="utf-8")), (
        f"{template.name}: a LIMIT without ORDER BY cuts rows in whatever order the engine "
        "reads them; order by the variables the caller reads, or end the line with "
        "'# any rows: WHY'"
    )


HUB_READS = ["neighbors_out", "neighbors_in"]
WALKS = ["follow_1", "follow_2", "follow_3"]


SORT_KEYS = {"neighbors_out": ("p", "o"), "neighbors_in": ("p", "s")}


@pytest.mark.parametrize(
    "template",
    [t for t in TEMPLATES if t.stem in WALKS + HUB_READS],
    ids=lambda p: str(p.relative_to(SPARQL)),
)
def test_the_rows_read_around_a_node_are_a_capped_sample_the_caller_sorts(template: Path) -> None:
    """What a method reads around a node (its neighbours, the walks of a relation path)
    costs a window, not the node's degree: the rows are cut at a window inside the
    template; the caller orders and cuts them (``ordered_rows.py``), here or wrapped in
    an ``ORDER BY``."""
    text = template.read_text(encoding="utf-8")
    flat = _COMMENT.sub("", text)
    assert "{ SELECT" in flat and "LIMIT {{window}}" in flat and "ORDER BY" not in flat
    keys = SORT_KEYS.get(template.stem, ("n1",))
    wrapped = TemplateSet().render("ordered", query=Rendered(text), keys=keys, limit=5)
    assert unordered_limits(wrapped) == []
    assert wrapped.rstrip().endswith(f"ORDER BY {' '.join('?' + k for k in keys)}\nLIMIT 5")


@pytest.mark.parametrize(
    "template", [t for t in TEMPLATES if t.stem in WALKS], ids=lambda p: p.name
)
def test_every_step_but_the_last_is_cut_before_the_next_is_read(template: Path) -> None:
    """A hub in the middle of a walk whose ends mostly have no next step would otherwise
    be read whole (a category page shared by every copy of a graph) to find few walks."""
    flat = _COMMENT.sub("", template.read_text(encoding="utf-8"))
    hops = int(template.stem.rsplit("_", 1)[1])
    reads = [flat.index(f"{{{{step{k}|step}}}}") for k in range(1, hops + 1)]
    for here, there in pairwise(reads):
        assert "LIMIT {{" in flat[here:there], f"{template.name}: a step read whole"


@pytest.mark.parametrize(
    "template",
    [t for t in TEMPLATES if t.stem in ("paths_1", "paths_2", "paths_3")],
    ids=lambda p: str(p.relative_to(SPARQL)),
)
def test_the_paths_are_ordered_by_the_caller(template: Path) -> None:
    """A path search's rows are sorted by its caller (``kg/path_reads.py``), here or
    wrapped in an ``ORDER BY`` that puts forward hops (true) first."""
    from middleware.kg.path_reads import PATH_ORDER

    text = template.read_text(encoding="utf-8")
    assert "ORDER BY" not in _COMMENT.sub("", text), template.name
    keys = PATH_ORDER[int(template.stem[-1])]
    wrapped = TemplateSet().render("ordered", query=Rendered(text), keys=keys, limit=5)
    assert unordered_limits(wrapped) == []
    assert (
        "ORDER BY " + " ".join(f"DESC(?{k[1:]})" if k.startswith("-") else f"?{k}" for k in keys)
        in wrapped
    )

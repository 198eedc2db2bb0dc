"""RDF/XML and TriX are scanned whole with expat before their parser reads the bytes:
a DOCTYPE anywhere is refused (its entities could expand without bound), so is nesting
past ``load_max_xml_depth`` and XML that is not well-formed; the store stays as it was."""

from __future__ import annotations

import gzip
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from middleware.cli import main
from middleware.errors import LoadError
from middleware.kg import load_guard
from middleware.kg.backends.local import LocalStore
from middleware.kg.xml_scan import XmlScan

GOOD = "<http://e/a> <http://e/p> <http://e/b> .\n"
RDF = '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://e/">'
TRIX = (
    '<TriX xmlns="http://www.w3.org/2004/03/trix/trix-1/"><graph><triple>'
    "<uri>http://e/a</uri><uri>http://e/p</uri><uri>http://e/c</uri>"
    "</triple></graph></TriX>\n"
)
COMMENT = "<!--" + " " * (1 << 20) + "-->\n"  # pushes what follows past the first MiB


def laughs(levels: int, prelude: str = "") -> str:
    """Billion laughs: entity ``levels`` expands to 4 × 10^(levels-1) characters."""
    names = [chr(97 + n) for n in range(levels)]
    declared = "".join(
        f' <!ENTITY {name} "{("&" + before + ";") * 10}">\n' for before, name in pairwise(names)
    )
    return (
        f'<?xml version="1.0"?>\n{prelude}<!DOCTYPE rdf:RDF [\n <!ENTITY a "haha">\n'
        f"{declared}]>\n{RDF}\n"
        f'<rdf:Description rdf:about="http://e/x"><e:p>&{names[-1]};</e:p></rdf:Description>\n'
        "</rdf:RDF>\n"
    )


def nested(depth: int) -> str:
    """RDF/XML whose elements nest exactly ``depth`` deep (``rdf:RDF`` is level 1), node
    and property elements in turn, one start tag a line: level k is on line k + 1."""
    tags = ["rdf:Description" if level % 2 == 0 else "e:p" for level in range(2, depth)]
    leaf = '<rdf:Description rdf:about="http://e/leaf"/>' if depth % 2 == 0 else "<e:p>x</e:p>"
    return (
        '<?xml version="1.0"?>\n'
        + RDF
        + "\n"
        + "".join(f"<{tag}>\n" for tag in tags)
        + leaf
        + "".join(f"</{tag}>" for tag in reversed(tags))
        + "</rdf:RDF>\n"
    )


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    graph = LocalStore(tmp_path / "store")
    good = tmp_path / "good.nt"
    good.write_text(GOOD, encoding="utf-8")
    graph.load([good])
    return graph


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Where each chunk the guard checks starts, in decompressed bytes."""
    starts: list[int] = []
    original = load_guard.GuardedInput._check

    def spy(self: load_guard.GuardedInput, chunk: bytes) -> None:
        starts.append(self.total)
        original(self, chunk)

    monkeypatch.setattr(load_guard.GuardedInput, "_check", spy)
    return starts


def write(path: Path, text: str) -> Path:
    data = text.encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def refused(store: LocalStore, path: Path, words: str) -> LoadError:
    before = len(store)
    with pytest.raises(LoadError) as caught:
        store.load([path])
    error = caught.value
    assert words in error.message, error.message
    assert error.message.startswith(f"{path}:"), error.message
    assert error.hint, error.message
    assert len(store) == before  # unchanged
    return error


@pytest.mark.parametrize("name", ["laughs.rdf", "laughs.rdf.gz"])
def test_entities_declared_after_a_long_comment_are_refused(
    store: LocalStore, tmp_path: Path, reads: list[int], name: str
) -> None:
    text = laughs(7, prelude=COMMENT)
    error = refused(store, write(tmp_path / name, text), "DOCTYPE")
    assert error.line == 3  # the comment is one line
    assert "N-Triples" in (error.hint or "")
    assert max(reads) <= text.index("[")  # no chunk past the DOCTYPE reached the parser


@pytest.mark.parametrize(
    "prelude",
    [
        "",
        "<?xml-stylesheet type='text/xsl' href='a.xsl'?>\n",
        "<!-- <rdf:RDF> ]]> -->\n",
        "<!-- one -->\n<?pi two?>\n\n",
    ],
    ids=["byte-0", "after-a-PI", "after-a-comment", "after-both"],
)
def test_any_doctype_before_the_root_is_refused(
    store: LocalStore, tmp_path: Path, prelude: str
) -> None:
    # no <!ENTITY at all: the DOCTYPE itself is refused
    bare = f"{prelude}<!DOCTYPE rdf:RDF>\n{RDF}<rdf:Description rdf:about='http://e/x'/></rdf:RDF>"
    error = refused(store, write(tmp_path / "bare.rdf", bare), "DOCTYPE")
    assert error.line == prelude.count("\n") + 1


@pytest.mark.parametrize(
    "text",
    [
        f"{RDF}<![CDATA[ x ]]><!DOCTYPE rdf:RDF></rdf:RDF>",
        f"{RDF}</rdf:RDF>\n<!DOCTYPE rdf:RDF>\n",
        f"{RDF}<rdf:Description rdf:about='http://e/x'>\n</rdf:RDF>\n",
        f"{RDF}\n<e:p>&undeclared;</e:p>\n</rdf:RDF>\n",
    ],
    ids=["doctype-after-cdata", "doctype-after-root", "unclosed", "undeclared-entity"],
)
def test_xml_that_is_not_well_formed_is_refused_with_its_line(
    store: LocalStore, tmp_path: Path, text: str
) -> None:
    error = refused(store, write(tmp_path / "bad.rdf", text), "not well-formed XML")
    assert error.line is not None


def test_doctype_and_entity_text_inside_comments_and_cdata_still_load(
    store: LocalStore, tmp_path: Path
) -> None:
    text = (
        '<?xml version="1.0"?>\n<!-- <!DOCTYPE x [<!ENTITY a "b">]> -->\n'
        f"{RDF}<rdf:Description rdf:about='http://e/x'>"
        '<e:p><![CDATA[<!DOCTYPE y [<!ENTITY c "d">]>]]></e:p>'
        "</rdf:Description></rdf:RDF>\n"
    )
    store.load([write(tmp_path / "quoted.rdf", text)])
    rows = store.query("SELECT ?o WHERE { <http://e/x> <http://e/p> ?o }").rows
    assert [str(r["o"].value) for r in rows] == ['<!DOCTYPE y [<!ENTITY c "d">]>']


@pytest.mark.parametrize("name", ["deep.rdf", "deep.rdf.gz"])
def test_deep_nesting_is_refused_after_a_bounded_read(
    store: LocalStore, tmp_path: Path, reads: list[int], name: str
) -> None:
    text = nested(100_001)  # 50,000 nested rdf:Description, 2.4 MB
    error = refused(store, write(tmp_path / name, text), "deeper than 256")
    assert error.line == 258  # the 257th level's start tag
    assert "load_max_xml_depth" in (error.hint or "")
    assert max(reads) < 64 << 10  # the first chunk holds the 257th level


def test_nesting_up_to_the_cap_loads(store: LocalStore, tmp_path: Path) -> None:
    store.load([write(tmp_path / "deep.rdf", nested(256))])
    assert len(store) == 1 + 127  # a triple per property element (levels 3, 5, ... 255)
    refused(store, write(tmp_path / "deeper.rdf", nested(257)), "deeper than 256")


def test_trix_with_a_doctype_is_refused(store: LocalStore, tmp_path: Path) -> None:
    refused(store, write(tmp_path / "g.trix", "<!DOCTYPE TriX>\n" + TRIX), "DOCTYPE")
    refused(store, write(tmp_path / "g.trix.gz", COMMENT + "<!DOCTYPE TriX>\n" + TRIX), "DOCTYPE")
    store.load([write(tmp_path / "fine.trix.gz", COMMENT + TRIX)])
    assert len(store) == 2


def test_the_setting_raises_the_cap(store: LocalStore, tmp_path: Path) -> None:
    deep = write(tmp_path / "deep.rdf", nested(300))
    refused(store, deep, "deeper than 256")
    store.caps = load_guard.LoadCaps(max_xml_depth=300)
    store.load([deep])
    assert len(store) == 1 + 149


def test_kgmw_load_into_a_new_store_reports_the_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGMW_PROGRESS", "false")
    deep = write(tmp_path / "deep.rdf", nested(300))
    store = tmp_path / "new"
    assert main(["load", str(deep), "--store", str(store)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"kgmw: error: {deep}:258: nests XML elements deeper than 256")
    assert "load_max_xml_depth" in error
    assert not store.exists() or len(LocalStore(store, read_only=True)) == 0
    monkeypatch.setenv("KGMW_LOAD_MAX_XML_DEPTH", "300")
    assert main(["load", str(deep), "--store", str(store)]) == 0
    assert len(LocalStore(store, read_only=True)) == 149


def chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    edges = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[a:b] for a, b in pairwise(edges)]


def fed(scan: XmlScan, parts: list[bytes]) -> tuple[int, LoadError | None]:
    """How many bytes ``scan`` passed before it refused (all of them when it did not)."""
    passed = 0
    try:
        for part in parts:
            scan.feed(part)
            passed += len(part)
        scan.close()
    except LoadError as err:
        return passed, err
    return passed, None


@settings(max_examples=60, deadline=None)
@given(
    prelude=st.sampled_from(["", COMMENT[:4] + " " * 5000 + "-->\n", "<?pi x?>\n"]),
    cuts=st.lists(st.integers(min_value=0), max_size=8),
)
def test_a_doctype_is_refused_before_its_declarations_pass_however_it_is_cut(
    prelude: str, cuts: list[int]
) -> None:
    data = laughs(3, prelude=prelude).encode()
    passed, error = fed(XmlScan("x.rdf", max_depth=256), chunks(data, cuts))
    assert error is not None and "DOCTYPE" in error.message
    assert passed <= data.index(b"[")  # the chunk holding "[" never passed


@settings(max_examples=60, deadline=None)
@given(
    depth=st.integers(min_value=2, max_value=40),
    cap=st.integers(min_value=4, max_value=30),
    cuts=st.lists(st.integers(min_value=0), max_size=8),
)
def test_depth_is_refused_exactly_past_the_cap_however_it_is_cut(
    depth: int, cap: int, cuts: list[int]
) -> None:
    data = nested(depth).encode()
    passed, error = fed(XmlScan("x.rdf", max_depth=cap), chunks(data, cuts))
    if depth <= cap:
        assert error is None and passed == len(data)
    else:
        assert error is not None and error.line == cap + 2
        first_too_deep = data.index(b">", data.index(b"\n", 0) + 1)  # end of rdf:RDF
        for _ in range(cap):
            first_too_deep = data.index(b">", first_too_deep + 1)
        assert passed <= first_too_deep  # the chunk that completes it never passed

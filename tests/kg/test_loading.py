"""Loading: every format, gzip, delimited profiles, clean errors, all-or-nothing."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from middleware.errors import BadRequest, LoadError, StoreBusy
from middleware.kg.backends.local import LocalStore
from tests.conftest import FILMS

NT = '<http://e.org/a> <http://e.org/p> <http://e.org/b> .\n<http://e.org/a> <http://www.w3.org/2000/01/rdf-schema#label> "A" .\n'
SAMPLES = {
    "g.nt": NT,
    "g.nq": "<http://e.org/a> <http://e.org/p> <http://e.org/b> <http://e.org/g> .\n",
    "g.ttl": "@prefix e: <http://e.org/> .\ne:a e:p e:b .\n",
    "g.trig": "@prefix e: <http://e.org/> .\ne:g { e:a e:p e:b . }\n",
    "g.rdf": (
        '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"'
        ' xmlns:e="http://e.org/">\n<rdf:Description rdf:about="http://e.org/a">\n'
        '<e:p rdf:resource="http://e.org/b"/>\n</rdf:Description>\n</rdf:RDF>\n'
    ),
    "g.jsonld": json.dumps({"@id": "http://e.org/a", "http://e.org/p": {"@id": "http://e.org/b"}}),
    "g.trix": (
        '<TriX xmlns="http://www.w3.org/2004/03/trix/trix-1/"><graph><triple>'
        "<uri>http://e.org/a</uri><uri>http://e.org/p</uri><uri>http://e.org/b</uri>"
        "</triple></graph></TriX>"
    ),
}


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_rdf_format_loads(tmp_path: Path, name: str) -> None:
    store = LocalStore()
    report = store.load([write(tmp_path, name, SAMPLES[name])])
    assert report.quads_read >= 1
    rows = store.query(
        "SELECT ?o WHERE { GRAPH ?g { <http://e.org/a> <http://e.org/p> ?o } } "
    ).rows
    rows += store.query("SELECT ?o WHERE { <http://e.org/a> <http://e.org/p> ?o }").rows
    assert {r["o"] for r in rows} == {NamedNode("http://e.org/b")}


def test_gzip_and_explicit_format(tmp_path: Path) -> None:
    store = LocalStore()
    store.load([write(tmp_path, "g.nt.gz", NT)])
    store.load(
        [write(tmp_path, "data.bin", "@prefix e: <http://e.org/> . e:c e:p e:d .")], format="ttl"
    )
    assert len(store) == 3


def test_unknown_extension_asks_for_format(tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="--format"):
        LocalStore().load([write(tmp_path, "data.bin", NT)])


def test_delimited_metaqa_rows_become_iris_and_labels(tmp_path: Path) -> None:
    store = LocalStore(profile="metaqa")
    kb = write(tmp_path, "kb.txt", "Titanic|directed_by|James Cameron\nTitanic|release_year|1997\n")
    report = store.load([kb])
    assert report.quads_read == 2 + 3  # two triples, three labels
    titanic = NamedNode(store.entity_iri("Titanic"))
    assert titanic.value == "https://kgmw.dev/metaqa/entity/Titanic"
    assert store.labels([NamedNode(store.entity_iri("James Cameron"))]) == {
        NamedNode("https://kgmw.dev/metaqa/entity/James%20Cameron"): "James Cameron"
    }


def test_delimited_freebase_with_names_and_relation_texts(tmp_path: Path) -> None:
    store = LocalStore(profile="freebase")
    triples = write(tmp_path, "train.txt", "/m/01\t/film/film/directed_by\t/m/02\n")
    names = write(tmp_path, "entity2text.txt", "/m/01\tTitanic\n/m/02\tJames Cameron\n")
    texts = write(tmp_path, "relation2text.txt", "/film/film/directed_by\tfilm film directed by\n")
    store.load([triples, names, texts])
    film = NamedNode("http://rdf.freebase.com/ns/m.01")
    relation = NamedNode("http://rdf.freebase.com/ns/film.film.directed_by")
    assert store.labels([film, relation]) == {film: "Titanic", relation: "film film directed by"}
    assert store.neighbors(film)[0].predicate == relation


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("bad.nt", NT + '<http://e.org/a> <http://e.org/p> "unterminated .\n', 3),
        ("bad.ttl", "@prefix e: <http://e.org/> .\ne:a e:p e:b .\ne:a e:p .\n", 3),
        (
            "bad.rdf",
            '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n<rdf:Description>\n</rdf:Descr>\n</rdf:RDF>\n',
            4,
        ),
        ("bad.jsonld", '{\n "@id": "http://e.org/a",\n "http://e.org/p": [ }\n', 3),
        ("kb.txt", "a|r|b\nc|r\nd|r|e|f\n", 3),
        ("kb2.txt", "a|r|b\n||x\n", 2),
    ],
)
def test_malformed_file_names_file_and_line_and_changes_nothing(
    tmp_path: Path, name: str, text: str, line: int
) -> None:
    store = LocalStore(profile="metaqa")
    store.load([write(tmp_path, "good.nt", NT)])
    before = sorted(str(q) for q in store._store)
    bad = write(tmp_path, name, text)
    with pytest.raises(LoadError) as caught:
        store.load(
            [
                write(
                    tmp_path, "more.nt", "<http://e.org/x> <http://e.org/p> <http://e.org/y> .\n"
                ),
                bad,
            ]
        )
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{bad}:{line}: ")
    assert sorted(str(q) for q in store._store) == before


def test_malformed_file_leaves_persistent_store_unchanged(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    LocalStore(folder, profile="metaqa").load([write(tmp_path, "kb.txt", "a|r|b\n")])
    store = LocalStore(folder)
    with pytest.raises(LoadError, match=r"kb2\.txt:2: "):
        store.load([write(tmp_path, "kb2.txt", "c|r|d\noops\n")])
    store.close()
    reopened = LocalStore(folder, read_only=True)
    assert len(reopened) == 3
    assert reopened.profile.name == "metaqa"
    assert sorted(p.name for p in folder.glob("gen-*")) == [os.readlink(folder / "current")]


def test_missing_file_and_non_utf8(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file"):
        LocalStore().load([tmp_path / "absent.nt"])
    latin = tmp_path / "kb.txt"
    latin.write_bytes("a|r|b\nCaf\xe9|r|b\n".encode("latin-1"))
    with pytest.raises(LoadError, match=r"kb\.txt:2: not UTF-8"):
        LocalStore(profile="metaqa").load([latin])


def test_directory_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(BadRequest, match="not a kgmw store"):
        LocalStore(tmp_path)


KILL_SCRIPT = """
import sys
from middleware.kg.backends.local import LocalStore
store = LocalStore(sys.argv[1], profile="metaqa", progress=False)
print("loading", flush=True)
store.load([sys.argv[2]])
print("finished", flush=True)
"""


@pytest.mark.slow
def test_kill_during_a_large_load_leaves_store_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    LocalStore(folder, profile="metaqa").load([write(tmp_path, "seed.txt", "Seed|r|Film\n")])
    big = tmp_path / "big.txt"
    with big.open("w", encoding="utf-8") as out:
        for i in range(600_000):
            out.write(f"movie {i}|starred_actors|actor {i % 5000}\n")
    process = subprocess.Popen(
        [sys.executable, "-c", KILL_SCRIPT, str(folder), str(big)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "loading"
    time.sleep(1.0)  # well into parsing and writing, long before the end
    assert process.poll() is None, "the load finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    store = LocalStore(folder, read_only=True)
    assert len(store) == 3  # the seed triple and its two labels, nothing more
    assert store.paths(store.entity_iri("Seed"), store.entity_iri("Film"), max_hops=1)
    store.close()
    # the next load cleans up the half-written generation and succeeds
    writer = LocalStore(folder)
    writer.load([write(tmp_path, "more.txt", "Other|r|Film\n")])
    assert len(writer) == 5
    assert len(list(folder.glob("gen-*"))) <= 2


def test_load_report_and_version(tmp_path: Path) -> None:
    store = LocalStore()
    assert store.version == 0
    report = store.load([FILMS])
    assert store.version == 1 and report.quads_added == report.quads_read == len(store)
    assert report.rate > 0


def test_store_path_expands_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    store = LocalStore("~/kg/films")
    store.load([FILMS])
    assert (tmp_path / "kg" / "films" / "current").is_symlink()
    assert not (tmp_path / "~").exists()


def test_recipes_load_metaqa_and_fb15k_237(tmp_path: Path) -> None:
    from middleware.cli import main

    data = Path(__file__).resolve().parent.parent / "data" / "eval"
    for name, folder, expected in (
        ("metaqa", data, "Titanic"),
        ("fb15k-237", data / "fb15k-237", "Kate Winslet"),  # the dataset's own folder works too
    ):
        store = tmp_path / name
        args = ["load", "--recipe", name, "--data-dir", str(folder), "--store", str(store)]
        assert main([*args, "--no-progress"]) == 0
        graph = LocalStore(store, read_only=True)
        assert expected in {e.label for e in graph.search(expected)}
    fb = LocalStore(tmp_path / "fb15k-237", read_only=True)
    assert fb.profile.name == "freebase"
    titanic = fb.describe("http://rdf.freebase.com/ns/m.0dr_4")
    assert titanic.label == "Titanic" and fb.degree(titanic.iri) == 2
    relation = "http://rdf.freebase.com/ns/film.film.directed_by"
    assert fb.labels([NamedNode(relation)])[NamedNode(relation)] == "film film directed by"


def test_recipe_errors_name_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from middleware.cli import main

    args = ["load", "--recipe", "fb15k-237", "--store", str(tmp_path / "s")]
    assert main([*args, "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "recipe fb15k-237: missing " in err and "fb15k-237/train.txt" in err
    assert main([*args]) == 2
    assert "needs --data-dir" in capsys.readouterr().err
    assert main(["load", "--store", str(tmp_path / "s")]) == 2
    assert "nothing to load" in capsys.readouterr().err


def test_a_second_writer_waits_for_the_first(tmp_path: Path) -> None:
    import threading

    from middleware.support.locks import file_lock

    first = LocalStore(tmp_path / "s")
    first.load_text("<http://e/a> <http://e/p> <http://e/b> .\n", name="a.nt")
    second = LocalStore(tmp_path / "s", wait=30)  # opening never waits: handles are read-only
    done: list[int] = []
    data = tmp_path / "c.nt"
    data.write_text("<http://e/c> <http://e/p> <http://e/d> .\n")
    with file_lock(tmp_path / "s" / ".lock"):  # another load in progress
        loader = threading.Thread(target=lambda: done.append(second.load([data]).quads_read))
        loader.start()
        time.sleep(1.0)
        assert not done  # still waiting for the lock
    loader.join(30)
    assert done == [1] and len(first) == 2  # the first sees the second's load too


def test_a_writer_that_waits_too_long_names_the_setting(tmp_path: Path) -> None:
    from middleware.support.locks import file_lock

    store = LocalStore(tmp_path / "s", wait=0.5)
    data = tmp_path / "a.nt"
    data.write_text("<http://e/a> <http://e/p> <http://e/b> .\n")
    with file_lock(tmp_path / "s" / ".lock"), pytest.raises(StoreBusy, match="store_lock_wait"):
        store.load([data])
    assert len(store) == 0


def test_a_reader_serves_a_load_made_after_it_opened(tmp_path: Path) -> None:
    """A service's store (read-only) moves to the new generation on its next query."""
    writer = LocalStore(tmp_path / "s")
    writer.load_text("<http://e/a> <http://e/p> <http://e/b> .\n", name="a.nt")
    reader = LocalStore(tmp_path / "s", read_only=True)
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    assert int(reader.query(count).rows[0]["n"].value) == 1
    version = reader.version
    writer.load_text("<http://e/c> <http://e/p> <http://e/d> .\n", name="c.nt")
    assert int(reader.query(count).rows[0]["n"].value) == 2
    assert reader.version > version  # label indexes rebuild
    writer.load_text("<http://e/e> <http://e/p> <http://e/f> .\n", name="e.nt")
    assert len(reader) == 3


def test_a_reader_opened_by_a_relative_path_follows_loads_after_a_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's folder is resolved when it is opened: a later change of the working
    directory (a service's, a notebook's) must not cut it off from new generations."""
    monkeypatch.chdir(tmp_path)
    writer = LocalStore(tmp_path / "s")
    writer.load_text("<http://e/a> <http://e/p> <http://e/b> .\n", name="a.nt")
    reader = LocalStore("s", read_only=True)
    monkeypatch.chdir(tmp_path.parent)
    writer.load_text("<http://e/c> <http://e/p> <http://e/d> .\n", name="c.nt")
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    assert int(reader.query(count).rows[0]["n"].value) == 2
    assert reader.path == tmp_path / "s"


def test_a_generation_a_reader_still_has_open_outlives_two_loads(tmp_path: Path) -> None:
    """A query spanning two loads never reads a deleted generation."""
    writer = LocalStore(tmp_path / "s")
    writer.load_text("<http://e/a> <http://e/p> <http://e/b> .\n", name="a.nt")
    reader = LocalStore(tmp_path / "s", read_only=True)
    first = reader._opened
    assert first is not None
    rows = reader._store.query("SELECT ?s WHERE { ?s ?p ?o }")  # a query under way
    for name in ("c", "e"):  # two loads meanwhile
        writer.load_text(f"<http://e/{name}> <http://e/p> <http://e/x> .\n", name=f"{name}.nt")
    assert (tmp_path / "s" / first).is_dir()  # still there: the reader holds it
    assert [row["s"].value for row in rows] == ["http://e/a"]
    reader.refresh()  # the reader moves on and lets go
    writer.load_text("<http://e/g> <http://e/p> <http://e/x> .\n", name="g.nt")
    assert not (tmp_path / "s" / first).exists()
    assert len(reader) == 4

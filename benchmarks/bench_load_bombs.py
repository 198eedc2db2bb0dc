"""Peak memory of `kgmw load` refusing crafted files, each in a fresh process, and what
the whole-file XML scan costs on genuine RDF/XML.

    ../.venv/bin/python bench_load_bombs.py [--xml]

Each bomb is built in a temporary folder and loaded with `kgmw load` into a store that
already holds one triple; the table gives the exit status, the first line of the
error, the peak resident memory of the `kgmw` process (its own rusage, from wait4), the
seconds it took and whether the store still holds its one triple. ``--xml`` builds only
the XML bombs (the gzip bombs take minutes to compress).

Then, in this process: 200,000 triples written as RDF/XML by pyoxigraph, parsed alone
and loaded into a new on-disk store, with the expat scan and without it (best of 3
each), and the 50,000-deep file refused, and loaded without the scan (as before it).
"""

from __future__ import annotations

import gzip
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyoxigraph as ox
from common import save

from middleware.errors import LoadError
from middleware.kg import load_guard
from middleware.kg.backends.local import LocalStore
from middleware.kg.loading import Source, read_quads
from middleware.kg.profiles import load_profile

GOOD = "<http://e/a> <http://e/p> <http://e/b> .\n"
ENTITIES = "".join(
    f' <!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">\n' for i in range(9)
)
LAUGHS = f"""<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [
 <!ENTITY a "haha">
{ENTITIES}]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://e/">
  <rdf:Description rdf:about="http://e/x"><e:p>&j;</e:p></rdf:Description>
</rdf:RDF>
"""
COMMENT = "<!--" + " " * (1 << 20) + "-->\n"  # the DOCTYPE past the first MiB
RDF = '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://e/">'
LEVELS = 50_000  # nested rdf:Description, each under a property element


def deep(path: Path) -> Path:
    with path.open("w") as out:
        out.write(f'<?xml version="1.0"?>\n{RDF}\n')
        out.write("<rdf:Description>\n<e:p>\n" * LEVELS + "x")
        out.write("</e:p></rdf:Description>\n" * LEVELS + "</rdf:RDF>\n")
    return path


def build_xml(folder: Path) -> dict[str, Path]:
    bombs = {}
    for name, suffix in (("billion laughs, RDF/XML", ".rdf"), ("billion laughs, TriX", ".trix")):
        path = folder / f"laughs{suffix}"
        path.write_text(LAUGHS.replace("rdf:RDF", "TriX") if suffix == ".trix" else LAUGHS)
        bombs[name] = path
    late = folder / "late-laughs.rdf"
    late.write_text(LAUGHS.replace("<!DOCTYPE", COMMENT + "<!DOCTYPE"))
    bombs["billion laughs after a 1 MiB comment"] = late
    bombs[f"{LEVELS:,} nested rdf:Description"] = deep(folder / "deep.rdf")
    return bombs


def build(folder: Path) -> dict[str, Path]:
    bombs = build_xml(folder)
    gz = folder / "bomb.nt.gz"  # 4 GiB of one comment line, about 4 MB compressed
    with gzip.open(gz, "wb", compresslevel=9) as out:
        out.write(GOOD.encode())
        out.write(b"#")
        block = b" " * (1 << 24)
        for _ in range(256):
            out.write(block)
    bombs["gzip single-line bomb (4 GiB)"] = gz
    lines = folder / "lines.nt.gz"  # 4 GiB of short comment lines
    with gzip.open(lines, "wb", compresslevel=9) as out:
        out.write(GOOD.encode())
        block = (b"#" + b" " * 62 + b"\n") * (1 << 18)
        for _ in range(256):
            out.write(block)
    bombs["gzip bomb, short lines (4 GiB)"] = lines
    return bombs


def genuine(path: Path, triples: int = 200_000) -> Path:
    """RDF/XML as pyoxigraph writes it: a label, a link, an integer and a type per node."""
    rng = random.Random(7)
    e = "http://example.org/"
    label = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
    integer = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")

    def made() -> Iterator[ox.Triple]:
        for n in range(triples // 4):
            node = ox.NamedNode(f"{e}e{n}")
            yield ox.Triple(node, label, ox.Literal(f"entity number {n}", language="en"))
            yield ox.Triple(
                node, ox.NamedNode(e + "p/knows"), ox.NamedNode(f"{e}e{rng.randrange(n + 1)}")
            )
            yield ox.Triple(
                node, ox.NamedNode(e + "p/age"), ox.Literal(str(n % 90), datatype=integer)
            )
            yield ox.Triple(node, ox.NamedNode(e + "p/type"), ox.NamedNode(f"{e}C{n % 7}"))

    ox.serialize(made(), output=str(path), format=ox.RdfFormat.RDF_XML, prefixes={"p": e + "p/"})
    return path


def best(runs: int, step: Callable[[int], object], scan: bool) -> float:
    """Fastest of ``runs`` calls of ``step``, with the XML scan on or off."""
    formats = load_guard.XML_FORMATS
    load_guard.XML_FORMATS = formats if scan else set()
    try:
        times = []
        for run in range(runs):
            start = time.perf_counter()
            step(run)
            times.append(time.perf_counter() - start)
        return min(times)
    finally:
        load_guard.XML_FORMATS = formats


def scan_cost(folder: Path) -> dict[str, object]:
    data = genuine(folder / "genuine.rdf")
    profile = load_profile("generic")
    source = Source(data, "rdfxml")
    count = sum(1 for _ in read_quads(source, profile))
    result: dict[str, object] = {"triples": count, "size_bytes": data.stat().st_size}

    def parse(_: int) -> int:
        return sum(1 for _ in read_quads(source, profile))

    def load(_: int) -> object:
        return LocalStore(folder / f"store-{time.time_ns()}").load([data])

    seconds: dict[str, list[float]] = {}
    for scan in (False, True, False, True):  # interleaved, so drift hits both alike
        for what, step in (("parse", parse), ("load", load)):
            key = f"{what}_{'scan' if scan else 'no_scan'}"
            seconds.setdefault(key, []).append(best(3, step, scan))
    for key, times in seconds.items():
        result[f"{key}_s"] = round(min(times), 3)
        result[f"{key}_triples_per_s"] = round(count / min(times))
    bomb = deep(folder / "deep-inprocess.rdf")

    def refuse(_: int) -> None:
        try:
            LocalStore().load([bomb])
        except LoadError:
            return
        raise AssertionError("the deep file loaded")

    result["deep_refused_s"] = round(best(3, refuse, True), 4)
    result["deep_loaded_without_scan_s"] = round(
        best(1, lambda _: LocalStore().load([bomb]), False), 2
    )
    print(result, flush=True)
    return result


def main() -> None:
    kgmw = Path(sys.executable).parent / "kgmw"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("building the bombs ...", flush=True)
        bombs = build_xml(folder) if "--xml" in sys.argv else build(folder)
        for name, path in bombs.items():
            store = folder / f"store-{path.stem}"
            seed = folder / "seed.nt"
            seed.write_text(GOOD)
            subprocess.run(
                [str(kgmw), "load", str(seed), "--store", str(store)],
                check=True,
                capture_output=True,
            )
            start = time.perf_counter()
            with tempfile.TemporaryFile("w+") as err:
                child = subprocess.Popen(
                    [str(kgmw), "load", str(path), "--store", str(store)],
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                )
                _, status, usage = os.wait4(child.pid, 0)  # this child's own peak
                child.returncode = os.waitstatus_to_exitcode(status)
                err.seek(0)
                stderr = err.read()
            seconds = time.perf_counter() - start
            kept = len(LocalStore(str(store), read_only=True))
            row = {
                "bomb": name,
                "size_bytes": path.stat().st_size,
                "exit": child.returncode,
                "error": next((x for x in stderr.splitlines() if "error" in x), "")[:200],
                "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
                "seconds": round(seconds, 2),
                "store_unchanged": kept == 1,
            }
            rows.append(row)
            print(row, flush=True)
        cost = scan_cost(folder)
    save("load_bombs", {"rows": rows, "xml_scan": cost})


if __name__ == "__main__":
    main()

"""Peak memory of `kgmw load` refusing crafted files, each in a fresh process.

    ../.venv/bin/python bench_load_bombs.py

Each bomb is built in a temporary folder and loaded with `kgmw load` into a store that
already holds one triple; the table gives the exit status, the first line of the
error, the peak resident memory of the `kgmw` process (its own rusage, from wait4), the
seconds it took and whether the store still holds its one triple.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import save

from middleware.kg.backends.local import LocalStore

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


def build(folder: Path) -> dict[str, Path]:
    bombs = {}
    for name, suffix in (("billion laughs, RDF/XML", ".rdf"), ("billion laughs, TriX", ".trix")):
        path = folder / f"laughs{suffix}"
        path.write_text(LAUGHS.replace("rdf:RDF", "TriX") if suffix == ".trix" else LAUGHS)
        bombs[name] = path
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


def main() -> None:
    kgmw = Path(sys.executable).parent / "kgmw"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("building the bombs ...", flush=True)
        bombs = build(folder)
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
    save("load_bombs", {"rows": rows})


if __name__ == "__main__":
    main()

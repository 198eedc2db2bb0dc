"""A real Virtuoso server for tests: Debian's ``virtuoso-opensource-7-bin`` on free local
ports with its own temporary database, RDF bulk-loaded through ``isql``.

``start_virtuoso`` writes a minimal ``virtuoso.ini`` (both ports on 127.0.0.1, the data
folder in ``DirsAllowed``, a small ``ResultSetMaxRows`` and ``MaxQueryExecutionTime`` so
the row cap and the time limit can be seen),
starts ``virtuoso-t`` in the foreground, waits for ``/sparql`` to answer, adds a
full-text rule for every literal (``bif:contains``), bulk-loads the files with
``ld_dir`` + ``rdf_loader_run``, indexes the text and checkpoints. ``stop`` ends it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

GRAPH = "http://kgmw.test/films"
ROW_CAP = 1000  # ResultSetMaxRows: Virtuoso's own graphs hold about 2,500 triples
TIME_LIMIT = 3  # MaxQueryExecutionTime (s): past it a query answers what it had so far
INSTALL = "apt install virtuoso-opensource-7-bin"

INI = """\
[Database]
DatabaseFile = {folder}/virtuoso.db
ErrorLogFile = {folder}/virtuoso.log
LockFile = {folder}/virtuoso.lck
TransactionFile = {folder}/virtuoso.trx
xa_persistent_file = {folder}/virtuoso.pxa
ErrorLogLevel = 7
FileExtend = 200
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {folder}/virtuoso-temp.db
TransactionFile = {folder}/virtuoso-temp.trx
Striping = 0

[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DirsAllowed = ., {data}
NumberOfBuffers = {buffers}
MaxDirtyBuffers = {dirty}
CheckpointInterval = 0
ServerThreads = 4

[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {folder}
ServerThreads = 4
MaxClientConnections = 4

[SPARQL]
ResultSetMaxRows = {row_cap}
MaxQueryExecutionTime = {time_limit}
MaxQueryCostEstimationTime = 0
"""


HUB = "http://kgmw.test/hub/Hub"
HUB_LINK = "http://kgmw.test/hub/links"


def write_hub(path: Path, spokes: int = ROW_CAP + 500) -> Path:
    """N-Triples of one entity linked to more entities than ``ROW_CAP``: its
    neighbourhood cannot come back whole."""
    lines = (f"<{HUB}> <{HUB_LINK}> <http://kgmw.test/hub/n{i}> .\n" for i in range(spokes))
    path.write_text("".join(lines), encoding="utf-8")
    return path


@dataclass
class VirtuosoServer:
    url: str  # the SPARQL endpoint, http://127.0.0.1:PORT/sparql
    sql_port: int
    folder: Path
    process: subprocess.Popen[bytes]
    isql: str

    def sql(self, statements: str) -> str:
        """Run SQL through isql as dba (the fresh database's default password)."""
        done = subprocess.run(
            [self.isql, f"127.0.0.1:{self.sql_port}", "dba", "dba", f"exec={statements}"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0 or "*** Error" in done.stdout + done.stderr:
            raise RuntimeError(f"isql failed: {done.stdout}{done.stderr}")
        return done.stdout

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def virtuoso_binaries() -> tuple[str, str]:
    """``virtuoso-t`` and its isql; skipped when missing, a failure under CI."""
    server = shutil.which("virtuoso-t")
    isql = shutil.which("isql-vt") or shutil.which("isql-v")
    if not server or not isql:
        message = f"Virtuoso is not installed (virtuoso-t and isql-vt: {INSTALL})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return server, isql


def _end_with_parent() -> None:
    """In the child: SIGTERM when the test process dies, even by a crash (Linux)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _answers(url: str, process: subprocess.Popen[bytes], seconds: float) -> bool:
    probe = url + "?" + urllib.parse.urlencode({"query": "ASK {}"})
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(probe, timeout=2):
                return True
        except OSError:
            time.sleep(0.25)
    return False


def start_virtuoso(
    files: list[Path],
    folder: Path,
    free_port: Callable[[], int],
    *,
    row_cap: int = ROW_CAP,
    time_limit: int = TIME_LIMIT,
    buffers: int = 10_000,
) -> VirtuosoServer:
    """Virtuoso over a new database in ``folder``, ``files`` loaded into ``GRAPH``."""
    server, isql = virtuoso_binaries()
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    for file in files:
        shutil.copy(file, data / file.name)
    for _ in range(3):
        sql_port, http_port = free_port(), free_port()
        (folder / "virtuoso.ini").write_text(
            INI.format(
                folder=folder,
                data=data,
                sql_port=sql_port,
                http_port=http_port,
                row_cap=row_cap,
                time_limit=time_limit,
                buffers=buffers,
                dirty=buffers * 3 // 5,
            ),
            encoding="utf-8",
        )
        process = subprocess.Popen(
            [server, "+foreground", "+configfile", str(folder / "virtuoso.ini")],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_end_with_parent,
        )
        running = VirtuosoServer(
            f"http://127.0.0.1:{http_port}/sparql", sql_port, folder, process, isql
        )
        if _answers(running.url, process, 90):
            patterns = sorted({f"*{file.suffix}" for file in files})
            loads = " ".join(f"ld_dir('{data}', '{p}', '{GRAPH}');" for p in patterns)
            running.sql(
                "DB.DBA.RDF_OBJ_FT_RULE_ADD(null, null, 'kgmw');"
                f"{loads} rdf_loader_run();"
                "DB.DBA.VT_INC_INDEX_DB_DBA_RDF_OBJ(); checkpoint;"
            )
            failed = running.sql(
                "select count(*) from DB.DBA.load_list where ll_error is not null;"
            )
            if "\n0\n" not in failed.replace(" ", ""):
                running.stop()
                raise RuntimeError(f"Virtuoso could not load {files}: {failed}")
            return running
        running.stop()
        for leftover in folder.glob("virtuoso*"):
            if leftover.suffix != ".ini":
                leftover.unlink()
    log = folder / "virtuoso.log"
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    pytest.fail(f"could not start Virtuoso: {tail}")

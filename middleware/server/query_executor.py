"""The executor process's side of the query pool: open the store, run queries one at a
time from the service's pipe, and end with the service.

Each executor runs under an address-space cap and answers every job with
``("ok", body, kind, truncated)``, ``("sent", kind, truncated, body size, bytes left
unsent)`` when it wrote the response itself, or ``("error", class name, message,
hint)``.
"""

from __future__ import annotations

import os
import resource
import select
import socket
import threading
import time
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from middleware.errors import EndpointError
from middleware.kg.engine_errors import engine_error
from middleware.serialize.native_results import NATIVE_FORMATS, write_native
from middleware.serialize.sparql_results import write_result
from middleware.server.direct_reply import response, send_once

if TYPE_CHECKING:
    from middleware.kg.backends.local import LocalStore
    from middleware.kg.sparql_guard import QueryDataset


def serve(
    conn: Connection,
    handles: socket.socket,
    path: str,
    profile: str,
    memory_mb: int,
    service: int,
) -> None:
    """An executor's loop: open the store, then run queries until the pipe closes. A
    job that carries the head of a response also comes with the caller's connection
    on ``handles``, and its result is sent there (``direct_reply``)."""
    cap = memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    threading.Thread(target=die_with, args=(service,), daemon=True).start()
    from middleware.kg.backends.local import LocalStore

    store = LocalStore(path, profile=profile, read_only=True)
    conn.send("ready")
    while True:
        try:
            job: Any = conn.recv()
            text, fmt, timeout, max_rows, dataset, direct = job
            caller = _received_socket(handles) if direct is not None else None
        except (EOFError, OSError):
            return
        try:
            body, kind, truncated = run_job(store, text, fmt, timeout, max_rows, dataset)
            if caller is None:
                conn.send(("ok", body, kind, truncated))
            else:
                head, cut = direct
                whole = response(head, body, cut if truncated else b"")
                conn.send(("sent", kind, truncated, len(body), send_once(caller, whole)))
        except Exception as err:  # ours, or the engine's (the query's fault or the store's)
            failed = engine_error(err, store.name)
            conn.send(("error", type(failed).__name__, failed.message, failed.hint))
        finally:
            if caller is not None:
                caller.close()  # this process's handle only: the service still holds it


def _received_socket(handles: socket.socket) -> socket.socket:
    """The caller's connection, sent by the service just before the job."""
    _, fds, _, _ = socket.recv_fds(handles, 1, 1)
    if len(fds) != 1:
        raise OSError("a job for a connection came without one")
    return socket.socket(fileno=fds[0])


def run_job(
    store: LocalStore,
    text: str,
    fmt: str,
    timeout: float,
    max_rows: int | None,
    dataset: QueryDataset | None,
) -> tuple[bytes, str, bool]:
    """One query's body, kind and whether it was cut. A SELECT whose whole result fits
    the caps is written by the engine (``native_results``); any other result, or one
    past a cap, is run again row by row, which stops at ``max_rows``."""
    if fmt in NATIVE_FORMATS:
        try:
            body = write_native(store.engine_result(text, dataset), fmt, max_rows=max_rows)
        except OSError as err:  # a SERVICE call or the storage failed while reading
            raise EndpointError(f"local store {store.name!r}: query failed: {err}") from err
        if body is not None:
            return body, "select", False
    result = store._execute(text, timeout, max_rows, dataset)
    return write_result(result, fmt), result.kind, result.truncated


def die_with(service: int) -> None:
    """End this executor as soon as the service process ``service`` is gone, even in the
    middle of a query (the engine lets other threads run), so no runaway outlives it."""
    try:
        handle = os.pidfd_open(service)
    except ProcessLookupError:
        os._exit(0)  # gone already
    except OSError:  # no pidfd here (old kernel, seccomp): look once a second
        while True:
            time.sleep(1.0)
            try:
                os.kill(service, 0)
            except ProcessLookupError:
                os._exit(0)
            except OSError:
                pass  # alive, owned by another user
    select.select([handle], [], [])  # readable once the process has exited
    os._exit(0)

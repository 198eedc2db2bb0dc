"""The executor process's side of the query pool: open the store, run queries one at a
time from the service's pipe, and end with the service.

Each executor runs under an address-space cap and answers every job with
``("ok", body, kind, truncated)`` or ``("error", class name, message, hint)``.
"""

from __future__ import annotations

import os
import resource
import select
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from middleware.errors import MiddlewareError


def serve(conn: Connection, path: str, profile: str, memory_mb: int, service: int) -> None:
    """An executor's loop: open the store, then run queries until the pipe closes."""
    cap = memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    threading.Thread(target=die_with, args=(service,), daemon=True).start()
    from middleware.kg.backends.local import LocalStore
    from middleware.serialize.sparql_results import write_result

    store = LocalStore(path, profile=profile, read_only=True)
    conn.send("ready")
    while True:
        try:
            job: Any = conn.recv()
        except (EOFError, OSError):
            return
        text, fmt, timeout, max_rows, dataset = job
        try:
            result = store._execute(text, timeout, max_rows, dataset)
            conn.send(("ok", write_result(result, fmt), result.kind, result.truncated))
        except MiddlewareError as err:
            conn.send(("error", type(err).__name__, err.message, err.hint))
        except Exception as err:  # the engine's own errors: report, keep serving
            conn.send(("error", "EndpointError", f"the query failed: {err}", None))


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

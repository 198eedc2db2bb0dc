"""An executor process: cut off the network, open the store, run jobs one at a time.

First thing, while it has one thread, the executor moves into a network namespace of
its own (``support/namespaces.py``), with the allowlist's relays as its only way out
(``outlets.py``); then it caps its address space, opens the store and says ``ready``
with the isolation it got. A job names a task (a module-level function, pickled by
reference), the query text and the task's arguments; the task runs on the open store
and its result goes back through the pipe, or straight onto a caller's connection
(``delivery.py``). The executor keeps its own clock too: a job still running ``GRACE``
seconds past its timeout ends the process, whatever the service does.

Replies: ``("ok", result)``, ``("sent", kind, truncated, size, unsent)`` when it wrote the
response itself, ``("error", class name, message, hint)``.
"""

from __future__ import annotations

import os
import resource
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from middleware.kg.engine_errors import engine_error
from middleware.kg.executors.delivery import Written, response, send_once
from middleware.kg.executors.outlets import RelayPlan, open_relays
from middleware.support.namespaces import MECHANISM, IsolationError, isolate_network

GRACE = 2.0  # seconds past a job's timeout after which the executor ends itself
HELPER_STACK = 256 << 10  # bytes of stack for the executor's own few threads
EXIT_OVERRAN = 86  # the exit code of an executor that stopped itself at its deadline


@dataclass(frozen=True)
class ExecutorSpec:
    """What an executor needs: how to open its store, its memory cap, the service's pid
    (it ends with the service) and its relays (None: no way out at all)."""

    open_store: Callable[[], Any]
    memory_mb: int
    service: int
    relays: RelayPlan | None = None
    name: str = "store"  # the store's name, in error messages
    isolate: bool = True  # False only in tests of what happens where it cannot be done


def serve(conn: Connection, handles: socket.socket, spec: ExecutorSpec) -> None:
    """An executor's life: isolate, open, say ready, then run jobs until the pipe closes.
    A job with ``direct`` set comes with the caller's connection on ``handles``."""
    isolation, why = isolate_quietly(spec.relays) if spec.isolate else (None, "not asked to")
    threading.stack_size(HELPER_STACK)  # this process's own threads, started before the cap
    threading.Thread(target=die_with, args=(spec.service,), daemon=True).start()
    clock = _Clock()
    cap = spec.memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    try:
        store = spec.open_store()
    except Exception as err:  # a missing or broken store: say why, end quietly
        conn.send(("failed", f"{type(err).__name__}: {err}"))
        return
    _quiet()
    conn.send(("ready", isolation, why))
    while True:
        try:
            job: Any = conn.recv()
            task, text, args, timeout, direct = job
            caller = _received_socket(handles) if direct is not None else None
        except (EOFError, OSError):
            return
        clock.start(timeout + GRACE)
        try:
            result = task(store, text, *args)
            if caller is None or not isinstance(result, Written):
                conn.send(("ok", result))
            else:
                head, cut = direct
                whole = response(head, result.body, cut if result.truncated else b"")
                sent = (len(result.body), send_once(caller, whole))
                conn.send(("sent", result.kind, result.truncated, *sent))
        except Exception as err:  # ours, or the engine's (the query's fault or the store's)
            failed = engine_error(err, spec.name)
            conn.send(("error", type(failed).__name__, failed.message, failed.hint))
        finally:
            clock.stop()
            if caller is not None:
                caller.close()  # this process's handle only: the service still holds it


def _quiet() -> None:
    """The engine's own messages (an allocation that failed, a panic) go nowhere: the
    service hears of every end through the pipe and reports it to the caller."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


def isolate_quietly(relays: RelayPlan | None) -> tuple[str | None, str]:
    """Cut this process off the network, with ``relays`` as its only way out: the
    mechanism (None when it could not be done) and why not."""
    try:
        isolate_network(
            loopback=relays is not None and bool(relays.listens),
            hosts=relays.hosts if relays is not None else None,
        )
        if relays is not None:
            open_relays(relays)
    except (IsolationError, OSError) as err:
        return None, str(err)
    return MECHANISM, ""


class _Clock:
    """Ends the process when a job runs past its deadline (the executor's own limit,
    besides the service's, which kills it sooner)."""

    def __init__(self) -> None:
        self._deadline: float | None = None
        self._wake = threading.Condition()
        threading.Thread(target=self._watch, daemon=True).start()

    def start(self, seconds: float) -> None:
        with self._wake:
            self._deadline = time.monotonic() + seconds
            self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._deadline = None

    def _watch(self) -> None:
        with self._wake:
            while True:
                if self._deadline is None:
                    self._wake.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left <= 0:
                    os._exit(EXIT_OVERRAN)
                self._wake.wait(left)


def _received_socket(handles: socket.socket) -> socket.socket:
    """The caller's connection, sent by the service just before the job."""
    _, fds, _, _ = socket.recv_fds(handles, 1, 1)
    if len(fds) != 1:
        raise OSError("a job for a connection came without one")
    return socket.socket(fileno=fds[0])


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

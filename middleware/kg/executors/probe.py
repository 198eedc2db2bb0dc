"""Whether query executors can be cut off the network on this machine, asked once.

``isolation()`` forks one child the way executors are forked, lets it isolate itself
and try a connection to this machine, and reports what it got: the mechanism, or why
there is none. ``isolation_line()`` is the sentence the service logs at start.
"""

from __future__ import annotations

import functools
from multiprocessing.connection import Connection

from middleware.kg.executors.process import isolate_quietly
from middleware.kg.executors.spawning import CONTEXT, ExecutorProcess
from middleware.support.namespaces import network_reachable

PROBE_TIMEOUT = 30.0


@functools.cache
def isolation() -> tuple[str | None, str]:
    """(the mechanism, None when there is none; why not)."""
    ours, theirs = CONTEXT.Pipe()
    child = ExecutorProcess(target=_probe, args=(theirs,), daemon=True, name="kgmw-probe")
    child.start()
    theirs.close()
    try:
        if ours.poll(PROBE_TIMEOUT):
            mechanism, why = ours.recv()
            return mechanism, why
        return None, "the probe did not answer"
    except (EOFError, OSError) as err:
        return None, f"the probe ended early: {err}"
    finally:
        child.join(5)
        ours.close()


def _probe(conn: Connection) -> None:
    mechanism, why = isolate_quietly(None)
    if mechanism is not None and network_reachable(("127.0.0.1", 9)):
        mechanism, why = None, "the namespace was made, yet this machine stayed reachable"
    conn.send((mechanism, why))


def isolation_line() -> tuple[bool, str]:
    """Whether executors are isolated here, and the one line that says how (or not)."""
    mechanism, why = isolation()
    if mechanism is not None:
        return (
            True,
            f"caller SPARQL on local stores runs in query executors cut off the network by {mechanism}",
        )
    return False, (
        f"query executors cannot be cut off the network here ({why}); caller SPARQL "
        "that names SERVICE, in any spelling, is refused instead"
    )

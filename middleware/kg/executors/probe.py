"""Whether query executors can be cut off the network on this machine, asked once.

``isolation()`` forks one child, lets it isolate itself as an executor does and try a
connection to this machine, and reports what it got: the mechanism, or why there is
none. The child is forked directly (not from the executors' fork server), so a
process that forks workers later (gunicorn's master) holds no fork server of its own.
``isolation_line()`` is the sentence the service logs at start.
"""

from __future__ import annotations

import functools
import json
import os
import select

from middleware.kg.executors.process import isolate_quietly
from middleware.support.namespaces import network_reachable

PROBE_TIMEOUT = 30.0


@functools.cache
def isolation() -> tuple[str | None, str]:
    """(the mechanism, None when there is none; why not)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: isolate, look, say, leave without cleanup
        os.close(read)
        try:
            mechanism, why = isolate_quietly(None)
            if mechanism is not None and network_reachable(("127.0.0.1", 9)):
                mechanism, why = None, "the namespace was made, yet this machine stayed reachable"
            os.write(write, json.dumps([mechanism, why]).encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        if not select.select([read], [], [], PROBE_TIMEOUT)[0]:
            return None, "the probe did not answer"
        said = os.read(read, 65536)
        mechanism, why = json.loads(said) if said else (None, "the probe ended early")
        return mechanism, why
    finally:
        os.close(read)
        os.waitpid(pid, 0)


def isolation_line() -> tuple[bool, str]:
    """Whether executors are isolated here, and the one line that says how (or not)."""
    mechanism, why = isolation()
    if mechanism is not None:
        return True, (
            f"caller SPARQL on local stores runs in query executors cut off the network "
            f"by {mechanism}"
        )
    return False, (
        f"query executors cannot be cut off the network here ({why}); caller SPARQL "
        "that names SERVICE, in any spelling, is refused instead"
    )

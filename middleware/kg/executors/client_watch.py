"""Noticing that a caller closed its connection while its request is still being worked on.

The caller's socket is polled beside the work (``POLLRDHUP``): a hang-up, or a read
that peeks at end of file, means nobody will read the answer, so the work can stop.
Data from the caller (a pipelined request) is not a close.
"""

from __future__ import annotations

import select
import socket


def watch_close(poller: select.poll, caller: socket.socket) -> bool:
    """Watch ``caller`` for a close as well; False when it cannot be watched."""
    try:
        poller.register(caller, select.POLLIN | select.POLLRDHUP)
    except (OSError, ValueError):
        return False
    return True


def closed(caller: socket.socket, events: int) -> bool:
    """Whether ``events`` on ``caller`` mean the peer closed (not just more data)."""
    if events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR | select.POLLNVAL):
        return True
    try:
        return caller.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True

"""Cutting a process off the network: Linux user and network namespaces, through libc.

``isolate_network()`` moves the calling process into a network namespace of its own,
made inside a new user namespace (no privileges needed). The new namespace has no
interface but a loopback that is down: no address outside is reachable, and no
address of the host either, whatever a query names. A process that needs a way out
(``sparql_service_allowlist``) asks for the loopback and, for host names, a private
``/etc/hosts``: the only listeners it can then reach are the ones it opens itself.

It must be called while the process has a single thread (the kernel refuses a new
user namespace to a threaded process), so the query executors call it first thing.
``IsolationError`` says why it could not be done; the caller decides what then.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import ipaddress
import os
import socket
import struct
import sys
import tempfile
from pathlib import Path

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_PRIVATE = 1 << 18
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_SIOCSIFADDR = 0x8916
_SIOCSIFNETMASK = 0x891C
_IFF_UP = 0x1
MECHANISM = "a network namespace of its own (Linux user + network namespaces)"


class IsolationError(OSError):
    """The process could not be cut off the network (the reason is the message)."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def isolate_network(*, loopback: bool = False, hosts: str | None = None) -> None:
    """Move this process into a new user and network namespace. With ``loopback`` its
    loopback interface is brought up; with ``hosts`` (the text of a hosts file) a new
    mount namespace shows that text as ``/etc/hosts``. Raises IsolationError."""
    if sys.platform != "linux":
        raise IsolationError("this platform has no network namespaces (Linux only)")
    if _threads() > 1:
        raise IsolationError(
            f"the process already runs {_threads()} threads; a new user namespace "
            "needs a single-threaded process"
        )
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNET | (CLONE_NEWNS if hosts is not None else 0)
    libc = _libc()
    if libc.unshare(flags) != 0:
        code = ctypes.get_errno()
        raise IsolationError(
            f"unshare(CLONE_NEWUSER | CLONE_NEWNET) failed: {os.strerror(code)} "
            "(user namespaces may be turned off: kernel.unprivileged_userns_clone, "
            "user.max_user_namespaces, or a container's seccomp profile)"
        )
    _map_ids(uid, gid)  # the same ids inside, so files keep their owner
    if hosts is not None:
        _show_hosts(libc, hosts)
    if loopback:
        _loopback_up()


def _map_ids(uid: int, gid: int) -> None:
    try:
        Path("/proc/self/setgroups").write_text("deny", encoding="ascii")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1", encoding="ascii")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1", encoding="ascii")
    except OSError as err:  # only cosmetic: files stay readable under the overflow id
        if err.errno not in (errno.EPERM, errno.EACCES):
            raise IsolationError(f"cannot map ids in the new namespace: {err}") from err


def _show_hosts(libc: ctypes.CDLL, text: str) -> None:
    """Bind a private copy of ``text`` over /etc/hosts in this mount namespace."""
    if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise IsolationError(f"cannot make mounts private: {os.strerror(ctypes.get_errno())}")
    handle, name = tempfile.mkstemp(prefix="kgmw-hosts-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        if libc.mount(name.encode(), b"/etc/hosts", None, _MS_BIND, None) != 0:
            code = ctypes.get_errno()
            raise IsolationError(f"cannot bind a hosts file over /etc/hosts: {os.strerror(code)}")
    finally:
        os.unlink(name)  # the mount keeps the file; nothing is left behind


def _ifreq(name: str, payload: bytes) -> bytes:
    return struct.pack("16s", name.encode()) + payload.ljust(24, b"\0")


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        got = fcntl.ioctl(sock, _SIOCGIFFLAGS, _ifreq("lo", b""))
        flags = struct.unpack("H", got[16:18])[0]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, _ifreq("lo", struct.pack("H", flags | _IFF_UP)))


def add_loopback_address(address: str, label: int) -> None:
    """Give this namespace's loopback one more IPv4 ``address`` (as ``lo:LABEL``), so a
    listener can take connections made to it."""
    ip = ipaddress.IPv4Address(address)
    if ip.is_loopback:
        return  # 127.0.0.0/8 is the loopback's already
    name = f"lo:{label}"
    addr = struct.pack("HH4s", socket.AF_INET, 0, ip.packed)
    mask = struct.pack("HH4s", socket.AF_INET, 0, b"\xff\xff\xff\xff")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock, _SIOCSIFADDR, _ifreq(name, addr))
        fcntl.ioctl(sock, _SIOCSIFNETMASK, _ifreq(name, mask))


def network_reachable(address: tuple[str, int] = ("192.0.2.1", 80)) -> bool:
    """Whether a TCP connection to ``address`` can even be attempted from here: False in
    a namespace without a route (ENETUNREACH) — a probe, nothing is sent."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setblocking(False)
        code = sock.connect_ex(address)
    return code not in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EACCES, errno.EPERM)

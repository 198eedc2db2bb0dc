"""Client addresses refused at the connection, before a byte of HTTP is read.

A caller that flooded the service with crafted queries or wrong API keys is refused for
a while (``sparql_penalty``, the auth-failure limit). Answering each refused request
with a 429 still costs an HTTP parse, a Flask request and a JSON body; a flood of them
takes the CPU from everyone else. Both servers (the development server and gunicorn's
worker class in ``gunicorn_workers``) ask the gate instead as soon as a connection is
accepted (``intake``) and hand it to the tarpit (unless ``server_refuse_at_connection``
is off).

The penalty box keeps its refusals of callers (API keys too) in the same table, so
under gunicorn a caller refused by one worker is refused by all.

The table lives in anonymous shared memory: made in gunicorn's master before it forks,
it is one table for every worker. Writes take a lock; reads do not (a torn slot can only
misread one address for one check).

>>> gate = AddressGate(slots=8)
>>> gate.refuse("127.0.0.9", seconds=30)
>>> gate.refused("127.0.0.9"), gate.refused("127.0.0.1")
(True, False)
"""

from __future__ import annotations

import hashlib
import ipaddress
import mmap
import multiprocessing
import struct
import time
import zlib
from collections.abc import Callable

_SLOT = struct.Struct("<16sd")  # the address as 16 bytes (IPv4 mapped), refused until
_PROBES = 8  # slots tried from an address's home slot


def _caller_key(caller: str) -> bytes:
    """16 bytes for a caller id; the leading 0xff makes it no IPv4-mapped address, and
    an IPv6 address starting ff.. (multicast) never opens a connection."""
    return b"\xff" + hashlib.blake2b(caller.encode(), digest_size=15).digest()


def client_network(address: str) -> str:
    """The client as the service counts it: an IPv4 address as it is, an IPv6 address
    as its /64 network (one host may hold a whole /64 and rotate through it), this
    machine's own as it is; text that is no address, unchanged.

    >>> client_network("2001:db8:1:2:aaaa::1"), client_network("::ffff:10.0.0.1")
    ('2001:db8:1:2::/64', '10.0.0.1')
    """
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv4Address) or ip.is_loopback:
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.IPv6Network((ip, 64), strict=False))


def _packed(address: str) -> bytes | None:
    """16 bytes for an address (or a ``/64`` network of ``client_network``): IPv4
    mapped into IPv6; IPv6 cut to its /64 network."""
    try:
        if "/" in address:
            network = ipaddress.ip_network(address, strict=False)
            if not isinstance(network, ipaddress.IPv6Network) or network.prefixlen != 64:
                return None
            ip: ipaddress.IPv4Address | ipaddress.IPv6Address = network.network_address
        else:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv4Address):
        return ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + ip.packed).packed
    if ip.ipv4_mapped is not None:
        return ip.packed
    return ip.packed[:8] + b"\0" * 8


_OWN = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})  # this machine's own, shared by all


class AddressGate:
    """``slots`` refused addresses at most, shared by every process forked after it."""

    def __init__(self, slots: int = 4096, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.slots = slots
        self._clock = clock  # CLOCK_MONOTONIC: the same in every process of the machine
        self._table = mmap.mmap(-1, slots * _SLOT.size)
        self._lock = multiprocessing.get_context("fork").Lock()

    def refused(self, address: str) -> bool:
        """Whether connections from ``address`` are refused now."""
        packed = _packed(address)
        return packed is not None and self._left(packed) > 0

    def refuse(self, address: str, seconds: float) -> None:
        """Refuse ``address`` for ``seconds`` from now (a longer refusal already held stays).
        This machine's own address (``127.0.0.1``, ``::1``) is never refused at the
        connection: it is every local client's, health probes and a reverse proxy on
        this machine among them (its callers still get 429s in the app)."""
        if address in _OWN:
            return
        packed = _packed(address)
        if packed is not None:
            self._hold(packed, seconds)

    def caller_left(self, caller: str) -> float:
        """Seconds ``caller`` (any caller id, an API key's included) stays refused."""
        return self._left(_caller_key(caller))

    def refuse_caller(self, caller: str, seconds: float) -> None:
        """Refuse ``caller`` for ``seconds`` in every process that shares this table."""
        self._hold(_caller_key(caller), seconds)

    def _left(self, packed: bytes) -> float:
        now = self._clock()
        for slot in self._probe(packed):
            held, until = _SLOT.unpack_from(self._table, slot * _SLOT.size)
            if held == packed:
                return max(0.0, float(until) - now)
        return 0.0

    def _hold(self, packed: bytes, seconds: float) -> None:
        if seconds <= 0:
            return
        now = self._clock()
        # a worker killed while writing would hold the lock forever: after a second,
        # write without it (the worst case is one torn slot)
        locked = self._lock.acquire(timeout=1.0)
        try:
            free, oldest, oldest_until = None, 0, float("inf")
            for slot in self._probe(packed):
                held, until = _SLOT.unpack_from(self._table, slot * _SLOT.size)
                if held == packed:
                    _SLOT.pack_into(
                        self._table, slot * _SLOT.size, packed, max(until, now + seconds)
                    )
                    return
                if free is None and until <= now:
                    free = slot
                if until < oldest_until:
                    oldest, oldest_until = slot, until
            # a free slot, else the one whose refusal ends first
            target = oldest if free is None else free
            _SLOT.pack_into(self._table, target * _SLOT.size, packed, now + seconds)
        finally:
            if locked:
                self._lock.release()

    def _probe(self, packed: bytes) -> list[int]:
        home = zlib.crc32(packed) % self.slots
        return [(home + step) % self.slots for step in range(min(_PROBES, self.slots))]

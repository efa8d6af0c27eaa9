"""Ports for servers the tests start as subprocesses.

A test that hands a port to another process must pick it first and let the process bind it
later. A port picked by binding to 0 comes from the kernel's ephemeral range, the same range
every outgoing connection takes its local port from, so on a busy machine a client socket
can take it in between and the server fails with "address already in use". Ports below
that range are never handed out to clients; picking one at random, checking it binds, and
never handing it out twice in one process leaves only another test process picking the
same port at the same moment, about one chance in ten thousand per pick.
"""

from __future__ import annotations

import random
import socket
import threading
from pathlib import Path

_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOWEST = 10_000
"""Below this sit the well-known and registered ports services on the machine may use."""
_handed_out: set[int] = set()
_lock = threading.Lock()


def _ephemeral_start() -> int:
    """The first port of the kernel's ephemeral range (Linux's default 32768 elsewhere)."""
    try:
        return int(_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def _binds(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port on 127.0.0.1 that binds now, outside the ephemeral range, not handed out before
    by this process."""
    high = _ephemeral_start() - 1
    rng = random.SystemRandom()
    with _lock:
        for _ in range(1_000):
            port = rng.randint(_LOWEST, high)
            if port not in _handed_out and _binds(port):
                _handed_out.add(port)
                return port
    raise RuntimeError(f"no free port on 127.0.0.1 between {_LOWEST} and {high}")

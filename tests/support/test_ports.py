"""The test servers' ports stay out of the range client sockets take theirs from."""

from __future__ import annotations

import socket

from tests.support.ports import free_port


def test_ports_sit_below_the_ephemeral_range_bind_and_are_not_handed_out_twice() -> None:
    with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
        ephemeral_start = int(f.read().split()[0])
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)
    assert all(10_000 <= port < ephemeral_start for port in ports)
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports[-1]))  # free when handed out

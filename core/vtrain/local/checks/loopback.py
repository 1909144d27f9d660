"""The `loopback` check: listening or connecting where the peers, other machines, could not."""

from __future__ import annotations

import socket

from vtrain.local.evidence import Evidence
from vtrain.local.verdict import Finding


def _hostname_addresses() -> set[str]:
    """What this machine's name resolves to (Debian: 127.0.1.1): gloo listens there, and on
    Vertex that is the machine's own address."""
    try:
        return set(socket.gethostbyname_ex(socket.gethostname())[2])
    except OSError:
        return set()


def loopback(ev: Evidence) -> list[Finding]:
    """Listening on a loopback address other than the replica's own where a peer needed it, and
    connecting to 127.0.0.1 for a peer."""
    if not ev.separate_hosts:
        return []
    listens: dict[str, set[tuple[str, int]]] = {}
    connects: dict[str, set[tuple[str, int]]] = {}
    # /proc shows the address a socket got, not the one asked for: native code that listens
    # on what the machine's name resolves to (gloo does) is right on Vertex, even where the
    # name resolves to 127.0.0.1 here. The probe sees Python's own request, "127.0.0.1" or
    # "localhost" as written, so only its requests are held to the strict rule.
    ambiguous = _hostname_addresses() | {"0.0.0.0", "::", ""}
    for name, kind, local, remote in ev.sockets:
        host, port = _split(local if kind == "listen" else remote)
        # Its own cluster port on a loopback address not its own is wrong whatever the name
        # resolves to: nothing right listens there (gloo's own ports are others).
        own_port = kind == "listen" and port == ev.ports.get(name) and host.startswith("127.")
        if host not in ambiguous or (own_port and host != ev.hosts.get(name)):
            (listens if kind == "listen" else connects).setdefault(name, set()).add((host, port))
    for run in ev.runs:
        for kind, value in run.probed():
            if kind in ("bind", "connect"):
                host, port = _split(value)
                host = "127.0.0.1" if host == "localhost" else host
                if kind == "bind" and port == 0:
                    continue  # a free port looked for, or a client's own end
                (listens if kind == "bind" else connects).setdefault(run.name, set()).add(
                    (host, port)
                )
    cluster_ports = {port: name for name, port in ev.ports.items()}
    findings = []
    for name, found in sorted(listens.items()):
        for host, port in sorted(found):
            if not host.startswith("127.") or host == ev.hosts.get(name):
                continue
            wanted = cluster_ports.get(port) == name or any(
                port == p for peer, addrs in connects.items() if peer != name for _, p in addrs
            )
            if wanted:
                findings.append(
                    Finding(
                        "loopback",
                        name,
                        f"listened on {host}:{port}, not on its cluster address "
                        f"{ev.hosts.get(name)}: on Vertex its peers, other machines, cannot reach "
                        "it there",
                        "listen on the host the cluster variables name for this replica, "
                        "or on 0.0.0.0",
                    )
                )
    peer_ports = {
        port: peer for peer, addrs in listens.items() for _, port in addrs
    } | cluster_ports
    for name, found in sorted(connects.items()):
        for host, port in sorted(found):
            peer = peer_ports.get(port)
            if host == "127.0.0.1" and peer is not None and peer != name:
                findings.append(
                    Finding(
                        "loopback",
                        name,
                        f"connected to {host}:{port} to reach {peer}: on Vertex {peer} is "
                        f"another machine (here {ev.hosts.get(peer)})",
                        "connect to the address the cluster variables give "
                        "(CLUSTER_SPEC, TF_CONFIG, MASTER_ADDR)",
                    )
                )
    return findings


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        return host, -1

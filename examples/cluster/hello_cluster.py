"""The smallest multi-replica job: every replica says hello to the chief over TCP.

No framework: only vtrain's `ClusterInfo` and sockets. Run it alone, or as a
rehearsal of a Vertex AI job with two workers, a parameter server and an evaluator:

    python examples/cluster/hello_cluster.py
    vtrain local run --workers 2 --ps 1 --evaluators 1 -- python examples/cluster/hello_cluster.py

The chief listens on its own address from the cluster description, waits for a
hello from every other replica, writes a small report into the model folder (only
the chief writes shared artifacts) and exits 0, which ends the job.
"""

from __future__ import annotations

import json
import os
import socket
import time

from vtrain import ClusterInfo, RunContext


def main() -> None:
    info = ClusterInfo.from_env()
    me = f"{info.role}-{info.index}"
    print(f"{me}: rank {info.rank}, {info.num_trainers} trainers, read from {info.source}")
    others = sum(len(a) for a in info.cluster.values()) - 1
    if info.is_chief:
        met = serve(info.address, others)
        context = RunContext.from_env(trial_id=info.trial_id)
        os.makedirs(context.model_dir, exist_ok=True)
        path = os.path.join(context.model_dir, "hello.json")
        with open(path, "w") as f:
            json.dump({"met": sorted(met)}, f)
        print(f"{me}: met {len(met)} replicas; wrote {path}")
    else:
        assert info.chief_address is not None, "a replica that is not the chief needs one"
        print(f"{me}: chief says {hello(info.chief_address, me)!r}")


def serve(address: str | None, expected: int) -> list[str]:
    """Accept one hello from each of `expected` replicas; their names."""
    if expected == 0 or address is None:
        return []
    host, port = address.rsplit(":", 1)
    met: list[str] = []
    with socket.create_server((host, int(port))) as server:
        while len(met) < expected:
            conn, _ = server.accept()
            with conn:
                name = conn.makefile().readline().strip()
                conn.sendall(f"hello {name}\n".encode())
            met.append(name)
    return met


def hello(chief: str, me: str) -> str:
    """Say hello to the chief, retrying while it starts; its answer."""
    host, port = chief.rsplit(":", 1)
    for _ in range(600):
        try:
            with socket.create_connection((host, int(port)), timeout=10) as conn:
                conn.sendall(f"{me}\n".encode())
                return conn.makefile().readline().strip()
        except OSError:
            time.sleep(0.1)  # the chief is not listening yet
    raise SystemExit(f"{me}: no chief at {chief}")


if __name__ == "__main__":
    main()

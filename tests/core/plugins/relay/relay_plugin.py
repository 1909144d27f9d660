"""A plugin defined in the tests, registered at runtime, with the shape MXNet's will have.

The chief is a coordinator that never trains (as MXNet's scheduler): it serves
until every worker has said it is done, then the framework's job is over. The
parameter servers keep a running sum that the workers add to, and serve until
the job ends (SIGTERM). Worker 0 leads. Workers wait for a late coordinator.
"""

from __future__ import annotations

import os
import select
import socket
import threading
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from datetime import timedelta

from vtrain import ClusterInfo
from vtrain.cluster import CHIEF, PS, WORKER
from vtrain.cluster.leader import Replica
from vtrain.plugins.base import Handle, KubeflowJob, Plugin
from vtrain.plugins.wait import split_address, wait_for_chief


def _ask(address: str, line: str) -> str:
    host, port = split_address(address, "relay")
    with socket.create_connection((host, port), timeout=30) as s:
        s.sendall(line.encode() + b"\n")
        return s.makefile().readline().strip()


@dataclass(frozen=True)
class RelayHandle(Handle):
    """A worker's way to the servers and the coordinator."""

    servers: tuple[str, ...]
    coordinator: str
    waited: float

    def add(self, value: int) -> int:
        """Add `value` to the sum the first parameter server keeps; return the new sum."""
        return int(_ask(self.servers[0], f"add {value}"))

    def _release(self, ok: bool) -> None:
        """Tell the coordinator this worker is done."""
        _ask(self.coordinator, f"done {self.info.index}")


class RelayPlugin(Plugin):
    """Coordinator on the chief, sum servers on the ps, trainers on the workers."""

    name = "relay"
    install = "it lives in vtrain's tests"
    kubeflow = KubeflowJob(kind="TFJob")

    def environment(
        self, info: ClusterInfo, environ: Mapping[str, str], **options: object
    ) -> dict[str, str | None]:
        """Where the coordinator and the servers are, as a framework would be told."""
        return {
            "RELAY_COORDINATOR": str(info.cluster[CHIEF][0]),
            "RELAY_SERVERS": ",".join(str(a) for a in info.cluster.get(PS, ())),
            "RELAY_NUM_WORKERS": str(len(info.cluster.get(WORKER, ()))),
        }

    def serves(self, info: ClusterInfo, **options: object) -> bool:
        """The coordinator and the servers serve; only workers train."""
        return info.role in (CHIEF, PS)

    def leader(self, info: ClusterInfo, **options: object) -> Replica | None:
        """Worker 0: the chief never trains."""
        return (WORKER, 0)

    def serve(self, info: ClusterInfo, stopped: threading.Event, **options: object) -> None:
        """Answer requests on this replica's own address until the job (or SIGTERM) ends it."""
        assert info.address is not None
        host, port = split_address(info.address, "relay")
        done: set[str] = set()
        total = 0
        workers = int(os.environ["RELAY_NUM_WORKERS"])
        with socket.create_server((host, port)) as server:
            while not stopped.is_set():
                if not select.select([server], [], [], 0.1)[0]:
                    continue
                conn, _ = server.accept()
                with conn:
                    words = conn.makefile().readline().split()
                    if not words:
                        continue  # a probe: vtrain's wait for the coordinator connects and leaves
                    verb, argument = words
                    if verb == "add":
                        total += int(argument)
                        conn.sendall(f"{total}\n".encode())
                    else:
                        done.add(argument)
                        conn.sendall(b"ok\n")
                if info.role == CHIEF and len(done) == workers:
                    return  # the framework's own end of the job

    def configure(
        self,
        info: ClusterInfo | None = None,
        *,
        wait: timedelta = timedelta(seconds=60),
        environ: MutableMapping[str, str] | None = None,
    ) -> RelayHandle:
        """Serve on the chief and the ps; on a worker, wait for the coordinator."""
        env = os.environ if environ is None else environ
        info = self.prepare(info, env)
        coordinator = env["RELAY_COORDINATOR"]
        host, port = split_address(coordinator, "RELAY_COORDINATOR")
        waited = wait_for_chief(host, port, wait, what="the coordinator")
        return RelayHandle(
            info=info,
            is_leader=self.leads(info, env),
            servers=tuple(env["RELAY_SERVERS"].split(",")),
            coordinator=coordinator,
            waited=waited,
            environ=env,
        )

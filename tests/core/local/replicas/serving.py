"""A replica under the plugin contract: parameter servers serve, the others train.

The plugin here says that ps replicas serve: `Plugin.prepare` then runs
`run_service`, which serves until the job stops it. The chief exits 0 once every
other replica has connected to it; a worker trains on until the chief has gone,
then takes --finish seconds, as a last step would, and exits 0.

With --serve-first OUT, a worker first says that it serves (as a ps would) and
fails, once: its restart trains, and must be treated as a replica that trains.
With --busy, a server meets nobody: it spins on `stopped.wait(0)`, inside the
event's lock most of the time, which is where a SIGTERM finds it.

    serving.py [--finish S] [--serve-first OUT] [--busy]
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
import time
from typing import Any

from vtrain import ClusterInfo
from vtrain.cluster import CHIEF, PS
from vtrain.plugins.base import Handle, Plugin
from vtrain.plugins.serve import announce


def meet(info: ClusterInfo) -> socket.socket:
    """Connect to the chief, trying until it listens."""
    host, port = str(info.cluster[CHIEF][0]).rsplit(":", 1)
    while True:
        try:
            return socket.create_connection((host, int(port)))
        except OSError:
            time.sleep(0.01)


class ServingPlugin(Plugin):
    """Servers on the ps; trainers elsewhere."""

    name = "serving"
    serving_roles = frozenset({PS})

    def serves(self, info: ClusterInfo, **options: Any) -> bool:
        """The parameter servers serve."""
        return info.role == PS

    def serve(self, info: ClusterInfo, stopped: threading.Event, **options: Any) -> None:
        """Be there for the chief, until the job stops this replica."""
        if "--busy" in sys.argv:
            while not stopped.wait(0):
                pass
            return
        with meet(info):
            stopped.wait()

    def configure(self, info: ClusterInfo | None = None, **options: Any) -> Handle:
        """Nothing to set up: the trainers here train by hand."""
        info = self.prepare(info, None)
        return Handle(info, is_leader=info.role == CHIEF, environ=os.environ)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--finish", type=float, default=0.0)
    p.add_argument("--serve-first")
    p.add_argument("--busy", action="store_true")
    a = p.parse_args()
    info = ServingPlugin().configure().info
    if info.role == CHIEF:
        others = sum(len(v) for v in info.cluster.values()) - 1
        host, port = str(info.address).rsplit(":", 1)
        with socket.create_server((host, int(port))) as server:
            peers = [server.accept()[0] for _ in range(others)]
        print(f"met {len(peers)}", flush=True)
        os._exit(0)  # the others see their connection end
    first = os.path.join(a.serve_first or "", f"{info.role}-{info.index}")
    if a.serve_first and not os.path.exists(first):
        announce()
        open(first, "w").close()
        return 3
    with meet(info) as chief:
        chief.recv(1)  # training, until the chief has gone
    time.sleep(a.finish)
    print("finished", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

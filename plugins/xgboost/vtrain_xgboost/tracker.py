"""XGBoost's tracker, hosted in the chief's process; the chief's port from the cluster leads to it.

It ranks workers by task id (`sortby="task"`), so tracker rank is vtrain rank.
Its timeout is the job's `wait`: it bounds how long the tracker waits for every
trainer to arrive, so a world size larger than the replicas that exist ends in
an error instead of a hang.

The tracker listens on a fresh port, and the chief's port is a doorway that
names it: to each connection it sends one line, ``vtrain-xgboost-tracker PORT``,
and closes. Why not the tracker on the chief's port itself: XGBoost binds
without SO_REUSEADDR, and a chief killed while workers were connected leaves its
port held by those dead connections (FIN_WAIT_2, then TIME_WAIT) for a minute or
more; not even a socket with SO_REUSEADDR binds beside them, as they lack the
flag. The doorway binds with SO_REUSEADDR, its own leftovers inherit it, and a
restarted chief binds again at once. And a worker reads the doorway's line in
Python, with a timeout (`reply_probe`): another program answering on the chief's
port delays it to the deadline, never hangs it inside XGBoost's connect. The
fresh port needs nothing of the network that XGBoost does not already need: its
workers link to each other on ports of their own choosing.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import threading
from datetime import timedelta
from typing import Any

from vtrain import LaunchError
from vtrain.plugins.wait import Backoff, wait_for
from vtrain_xgboost.rendezvous import Rendezvous

GREETING = b"vtrain-xgboost-tracker"
"""The first word of the doorway's line; the tracker's port follows."""
_ACCEPT_POLL = 0.2  # seconds between looks at `close()` while the doorway waits for a connection


def tracker_port(line: bytes) -> int | None:
    """The tracker's port from the doorway's line; None if it is not such a line."""
    words = line.split()
    if len(words) == 2 and words[0] == GREETING and words[1].isdigit():
        port = int(words[1])
        return port if 0 < port < 65536 else None
    return None


class Tracker:
    """XGBoost's tracker on a fresh port, and the doorway on the chief's port that names it."""

    def __init__(self, rabit: Any, doorway: socket.socket, port: int) -> None:
        self.rabit = rabit
        self.port = port
        """The port the tracker listens on (the doorway's is the chief's, from the cluster)."""
        self._doorway = doorway
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="vtrain-xgboost-doorway")
        self._thread.daemon = True
        self._thread.start()

    def _serve(self) -> None:
        line = b"%s %d\n" % (GREETING, self.port)
        self._doorway.settimeout(_ACCEPT_POLL)
        while not self._closed.is_set():
            try:
                conn, _ = self._doorway.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed
            with conn, contextlib.suppress(OSError):
                conn.sendall(line)

    def close_doorway(self) -> None:
        """Stop answering on the chief's port, and free it."""
        self._closed.set()
        self._thread.join(5 * _ACCEPT_POLL)
        self._doorway.close()


def _bind_doorway(rv: Rendezvous) -> socket.socket | str:
    """The chief's port, listening; or why not, if another socket still holds it."""
    doorway = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A restarted chief rebinds beside the closed connections of its previous run.
    doorway.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        doorway.bind((rv.bind_host or "", rv.tracker_port or 0))
        doorway.listen(128)
    except OSError as e:
        doorway.close()
        if e.errno == errno.EADDRINUSE:
            return f"{e.strerror} (another program listens there)"
        raise LaunchError(
            f"XGBoost's tracker cannot listen on {rv.bind_host}:{rv.tracker_port}: {e.strerror}",
            source=rv.address_source,
            value=rv.tracker_address,
            expected="a port of the chief's that nothing else uses",
        ) from None
    return doorway


def start_tracker(rv: Rendezvous, wait: timedelta) -> Tracker:
    """A started tracker for `rv`'s world, with its doorway on the chief's port."""
    from xgboost.tracker import RabitTracker

    where = f"{rv.bind_host}:{rv.tracker_port}"
    hint = "the chief's port from the cluster is the tracker's; another program may hold it"
    bound: list[socket.socket] = []

    def listen() -> str | None:
        doorway = _bind_doorway(rv)
        if isinstance(doorway, str):
            return doorway
        bound.append(doorway)
        return None

    wait_for(
        listen,
        what="XGBoost's tracker's port",
        address=where,
        source=rv.address_source,
        deadline=wait,
        backoff=Backoff(first=0.1, most=2.0),
        failed="did not come free",
        hint=hint,
    )
    doorway = bound[0]
    try:
        rabit = RabitTracker(
            n_workers=rv.world_size,
            host_ip=rv.bind_host,
            port=0,
            sortby="task",
            timeout=max(1, round(wait.total_seconds())),
        )
        rabit.start()
        port = int(rabit.worker_args()["dmlc_tracker_port"])
    except BaseException:
        doorway.close()
        raise
    return Tracker(rabit, doorway, port)


def stop_tracker(tracker: Tracker, *, finish_seconds: float | None) -> None:
    """Wait up to `finish_seconds` for every worker to sign off (None: not at all), then free it."""
    from xgboost.core import XGBoostError

    tracker.close_doorway()
    try:
        if finish_seconds is not None:
            tracker.rabit.wait_for(max(1, round(finish_seconds)))
    except XGBoostError:
        pass  # a worker that died never signs off: the job's own failure says why
    finally:
        # Freeing a running tracker interrupts its accept, and it raises to say so.
        with contextlib.suppress(XGBoostError):
            tracker.rabit.free()

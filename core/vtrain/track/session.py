"""`Track`: what `handle.track` gives, the one place a training script logs its run to.

`params(dict)`, `metrics(dict, step=)`, `artifact(path)` and `tags(dict)` write from
the leader only; elsewhere they do nothing, so the same script runs on every replica.
The run is the job's (or the trial's): a restarted leader opens the same run as its
next attempt, and `handle.resume` marks where it resumed (`vtrain.track.records`
says how attempts that logged the same step merge). Nothing is written until the
script tracks something: a job that never calls it leaves no run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from vtrain.log import logger
from vtrain.progress import tracker
from vtrain.storage import Location
from vtrain.track.identity import attempt_file, next_attempt
from vtrain.track.jsonl import JsonLinesSink
from vtrain.track.records import (
    ARTIFACT,
    END,
    PARAMS,
    RESUME,
    START,
    TAGS,
    line,
    mapping_record,
    metric_records,
)
from vtrain.track.sender import Sender

log = logger(__name__)


class Track:
    """One job's (or trial's) run, as this replica sees it: written by the leader alone."""

    def __init__(
        self,
        *,
        leader: bool,
        run: str,
        folder: Callable[[], Location],
        tensorboard: Callable[[], Location] | None = None,
    ) -> None:
        """`folder`: the run's folder, made when the leader first tracks something;
        `tensorboard`: the TensorBoard folder its metrics go to as well, if any."""
        self.leader = leader
        self.run = run
        self._folder = folder
        self._tensorboard = tensorboard
        self._senders: list[Sender] = []
        self._sender: Sender | None = None
        self._closed = False
        self._broken: str | None = None
        self._location: Location | None = None
        self._resumed: dict[str, Any] | None = None
        self._steps = 0
        self.attempt = 0
        """This process's attempt of the run (1 for the first start); 0 before it opens."""

    # -- the words ------------------------------------------------------------------------

    def params(self, values: Mapping[str, Any]) -> None:
        """The run's parameters (hyperparameters, the job's settings), as text."""
        if self.leader:
            self._put(mapping_record(PARAMS, values, self._open(), time.time()))

    def metrics(self, values: Mapping[str, Any], step: int | None = None) -> None:
        """Metrics at `step` (default: the step the handle counts, else one more than the last)."""
        if not self.leader:
            return
        if step is None:
            counted = tracker().step
            step = counted if counted is not None else self._steps + 1
        self._steps = max(self._steps, step)
        for record in metric_records(values, step, self._open(), time.time()):
            self._put(record)

    def tags(self, values: Mapping[str, Any]) -> None:
        """Tags of the run, as text."""
        if self.leader:
            self._put(mapping_record(TAGS, values, self._open(), time.time()))

    def artifact(self, path: str | os.PathLike[str]) -> str | None:
        """Copy a local file or folder into the run's artifacts; its URI there (the leader)."""
        if not self.leader:
            return None
        from vtrain.errors import UsageError

        local = os.fspath(path)
        if not os.path.exists(local):
            raise UsageError(
                "no such file or folder", source="track.artifact", value=local, expected="a path"
            )
        attempt = self._open()
        if self._location is None or self._closed:
            return None
        name = os.path.basename(local.rstrip(os.sep)) or "artifact"
        where = self._location.join("artifacts")
        where.makedirs()
        where.upload(local, name)
        uri = f"{where.uri.rstrip('/')}/{name}"
        self._put(
            {"kind": ARTIFACT, "name": name, "uri": uri, "attempt": attempt, "t": time.time()}
        )
        return uri

    # -- what the handle tells it ---------------------------------------------------------

    def resumed(self, step: int, uri: str | None) -> None:
        """The leader resumed from a commit of `step` (`uri`): marked in the run, once open."""
        self._resumed = {"kind": RESUME, "step": step, "from": uri}
        if self._sender is not None:
            self._put({**self._resumed, "attempt": self.attempt, "t": time.time()})

    def close(self, timeout: float = 10.0) -> None:
        """The end of this attempt: its records written, within `timeout` seconds in all;
        what is tracked after it is dropped (the attempt has ended)."""
        if self._closed:
            return
        self._closed = True
        if self._sender is None:
            return
        self._put({"kind": END, "attempt": self.attempt, "t": time.time()})
        deadline = time.monotonic() + timeout
        for sender in self._senders:
            sender.close(max(0.1, deadline - time.monotonic()))
        self._senders = []

    # -- opening ----------------------------------------------------------------------------

    def _open(self) -> int:
        if self._sender is not None or self._closed or self._broken is not None:
            return self.attempt
        try:
            location = self._folder()
            location.makedirs()
            self.attempt = next_attempt(location.list())
        except Exception as e:  # storage's errors, whatever their class: the loop goes on
            from vtrain.redact import redact_text

            self._broken = redact_text(f"{type(e).__name__}: {e}")
            log.warning(
                f"vtrain: cannot open tracking run {self.run}, not tracking it: {self._broken}"
            )
            return self.attempt
        self._location = location
        name = attempt_file(self.attempt)
        self._sender = Sender(JsonLinesSink(location, name), f"tracking run {self.run}")
        self._senders = [self._sender]
        if self._tensorboard is not None:
            from vtrain.track.tensorboard import TensorBoardSink

            sink = TensorBoardSink(self._tensorboard(), self.attempt)
            self._senders.append(Sender(sink, f"TensorBoard events of run {self.run}"))
        start = {"kind": START, "run": self.run, "attempt": self.attempt, "t": time.time()}
        self._put({**start, "pid": os.getpid()})
        if self._resumed is not None:
            self._put({**self._resumed, "attempt": self.attempt, "t": time.time()})
        import atexit

        atexit.register(self.close)  # a script that never closes its handle loses nothing
        again = f", attempt {self.attempt}" if self.attempt > 1 else ""
        log.info(f"vtrain: tracking run {self.run}{again}: {location.uri.rstrip('/')}/{name}")
        return self.attempt

    def _put(self, record: Mapping[str, Any]) -> None:
        data = line(record)
        for sender in self._senders:
            sender.put(data)

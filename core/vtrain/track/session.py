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
from collections.abc import Callable, Mapping, Sequence
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
    numbers,
)
from vtrain.track.sender import Sender

log = logger(__name__)

Sink = Callable[[list[bytes]], None]
Backend = Callable[[int], "tuple[Sink, str]"]
"""Given the attempt, a backend's sink of encoded records, and what it writes (for the log)."""


class Track:
    """One job's (or trial's) run, as this replica sees it: written by the leader alone."""

    def __init__(
        self,
        *,
        leader: bool,
        run: str,
        folder: Callable[[], Location],
        backends: Sequence[Backend] = (),
    ) -> None:
        """`folder`: the run's folder, made when the leader first tracks something;
        `backends`: what else each attempt writes to (TensorBoard, MLflow), made at its open."""
        self.leader = leader
        self.run = run
        self._folder = folder
        self._backends = backends
        self._senders: list[Sender] = []
        self._sender: Sender | None = None
        self._closed = False
        self._broken: str | None = None
        self._location: Location | None = None
        self._resumed: dict[str, Any] | None = None
        self._staging: str | None = None
        self._steps = 0
        self._last: dict[str, tuple[int, float | str]] = {}
        self.attempt = 0
        """This process's attempt of the run (1 for the first start); 0 before it opens."""
        self.auto = False
        """Whether the plugins' helpers log what the framework computes (`autolog`)."""

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
            # The same value at the same step twice (a callback's log and the tuning metric's
            # report of it) is one point, not two.
            seen = (record["step"], record["value"])
            if isinstance(record["value"], float):  # the last value, for a TrainJob's status
                tracker().metrics[record["name"]] = record["value"]
            if self._last.get(record["name"]) != seen:
                self._last[record["name"]] = seen
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
        # The backends' threads copy it later, from a place that stays: the run's own copy.
        kept = os.path.join(where.path, name) if where.path is not None else self._staged(local)
        record = {"kind": ARTIFACT, "name": name, "uri": uri, "attempt": attempt}
        self._put({**record, "local": kept, "t": time.time()})
        return uri

    def _staged(self, local: str) -> str | None:
        """A copy of `local` for the backends, where the run's own copy is in a bucket."""
        if len(self._senders) < 2:
            return None
        import shutil
        import tempfile

        if self._staging is None:
            self._staging = tempfile.mkdtemp(prefix="vtrain-track-")
        target = os.path.join(self._staging, str(len(os.listdir(self._staging))))
        os.makedirs(target)
        name = os.path.join(target, os.path.basename(local.rstrip(os.sep)) or "artifact")
        if os.path.isdir(local):
            shutil.copytree(local, name)
        else:
            shutil.copyfile(local, name)
        return name

    def autolog(self, on: bool = True) -> Track:
        """Have the plugins' helpers log what the framework already computes, from the leader:
        the Keras callback's epoch logs, Lightning's logged metrics (`VtrainLogger`), XGBoost's
        evaluation results each round, and `handle.report`'s metric. Off by default."""
        self.auto = on
        return self

    def logged(self, values: Mapping[str, Any], step: int) -> None:
        """What a framework's helper computed, at `step`: its numbers, when `autolog` is on
        (a value that is no number, a framework's text or list, is left out)."""
        if self.auto and self.leader:
            self.metrics(numbers(values), step=step)

    # -- what the handle tells it ---------------------------------------------------------

    def resumed(self, step: int, uri: str | None) -> None:
        """The leader resumed from a commit of `step` (`uri`): marked in the run, once open."""
        self._resumed = {"kind": RESUME, "step": step, "from": uri}
        if self._sender is not None:
            self._put({**self._resumed, "attempt": self.attempt, "t": time.time()})

    def close(self, timeout: float = 10.0, *, ok: bool | None = None) -> None:
        """The end of this attempt: its records written, within `timeout` seconds in all;
        what is tracked after it is dropped (the attempt has ended). `ok`: whether the script
        ended well (None: as far as the interpreter knows, no uncaught error)."""
        if self._closed:
            return
        self._closed = True
        if self._sender is None:
            return
        if ok is None:
            import sys

            ok = not hasattr(sys, "last_value")  # set once an uncaught error was printed
        self._put({"kind": END, "attempt": self.attempt, "ok": ok, "t": time.time()})
        deadline = time.monotonic() + timeout
        for sender in self._senders:
            sender.close(max(0.1, deadline - time.monotonic()))
        self._senders = []
        if self._staging is not None:
            import shutil

            shutil.rmtree(self._staging, ignore_errors=True)

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
        for backend in self._backends:
            try:
                sink, what = backend(self.attempt)
            except Exception as e:  # a backend missing its extra, a bad folder: the rest go on
                from vtrain.redact import redact_text

                log.warning(f"vtrain: run {self.run}: not tracked there: {redact_text(str(e))}")
                continue
            self._senders.append(Sender(sink, what))
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

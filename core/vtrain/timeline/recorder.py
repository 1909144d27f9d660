"""Each trainer's timeline file: one line per event, appended with one write(2).

`vtrain local run` names each process's file (VTRAIN_TIMELINE_FILE: its replica
and attempt). On a platform a launched trainer writes `<replica>.<attempt>.jsonl`
in `timeline/` beside the checkpoints' folder (AIP_CHECKPOINT_DIR's parent; a
gs:// one through its /gcs/ mount), the attempt the next free number there; where no
AIP_CHECKPOINT_DIR is given, nothing (unless VTRAIN_TIMELINE_FILE names a file).
VTRAIN_TIMELINE=off records nothing. A line is written whole by one append, so a
SIGKILL loses at most the line being written; a file that cannot be written is
said once, and the trainer goes on unrecorded.
"""

from __future__ import annotations

import os
import time

from vtrain.log import logger
from vtrain.timeline.events import EXIT, START, folder_of, line, next_attempt, replica_file
from vtrain.variables import TIMELINE_FILE

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

FILE_VARIABLE = TIMELINE_FILE
SWITCH_VARIABLE = "VTRAIN_TIMELINE"

log = logger(__name__)


class Recorder:
    """Appends one process's events to its file."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._fd: int | None = None
        self._pid = os.getpid()
        if path is not None:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            self._fd = os.open(path, flags, 0o644)

    def record(self, event: str, *, t: float | None = None, **fields: Any) -> None:
        """Append `event` (now, unless `t`) with `fields`; never raises."""
        if self._fd is None or os.getpid() != self._pid:  # a forked child records nothing
            return
        try:
            os.write(self._fd, line({"t": time.time() if t is None else t, "e": event, **fields}))
        except (OSError, ValueError) as e:
            self._fd = None
            log.warning(f"vtrain: the timeline is no longer recorded ({self.path}: {e})")

    def close(self, *, exiting: bool = True) -> None:
        """Record the process's exit (unless not `exiting`), and stop."""
        if exiting:
            self.record(EXIT)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


_OFF = Recorder(None)
_current = _OFF


def recorder() -> Recorder:
    """This process's recorder (one that records nothing where no timeline is kept)."""
    return _current if _current._pid == os.getpid() else _OFF


def start_recording(
    environ: Mapping[str, str], replica: str, checkpoint_dir: str, *, launched: bool
) -> Recorder:
    """Open this process's timeline (once) and record its start; `launched`: a platform or a
    launcher runs it (alone, a script records nothing unless a file is named for it)."""
    global _current
    if _current is not _OFF and _current._pid == os.getpid():
        return _current
    if environ.get(SWITCH_VARIABLE, "").strip().lower() == "off":
        return _OFF
    # A platform that names no checkpoint folder (torchrun, Kubeflow without AIP_* folders)
    # gives no shared place: a file on the pod's own disk would be lost with it.
    beside = launched and bool(checkpoint_dir)
    path = environ.get(FILE_VARIABLE) or (
        _platform_file(environ, replica, checkpoint_dir) if beside else None
    )
    if path is None:
        return _OFF
    try:
        _current = Recorder(path)
    except OSError as e:
        log.warning(f"vtrain: the timeline is not recorded ({path}: {e.strerror or e})")
        return _OFF
    _current.record(START, t=process_started(), pid=os.getpid())
    import atexit

    atexit.register(_current.close)
    return _current


def _platform_file(environ: Mapping[str, str], replica: str, checkpoint_dir: str) -> str | None:
    from vtrain.storage import open_location

    try:
        folder = open_location(folder_of(checkpoint_dir), environ=environ).path
        if folder is None:  # gs:// without its /gcs/ mount: an object appends to nothing
            log.info(
                "vtrain: no timeline recorded: its folder is in gs:// and not mounted at /gcs/"
            )
            return None
        os.makedirs(folder, exist_ok=True)
        attempt = next_attempt(os.listdir(folder), replica)
        return os.path.join(folder, replica_file(replica, attempt))
    except Exception as e:  # storage's errors, whatever their class: training goes on
        log.warning(f"vtrain: no timeline recorded ({type(e).__name__}: {e})")
        return None


def process_started() -> float:
    """When this process started, in wall-clock seconds (now, where /proc cannot say)."""
    from vtrain.process_start import start_time

    ticks = start_time(os.getpid())
    try:
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))  # type: ignore[operator]
    except (OSError, ValueError, IndexError, TypeError):
        return time.time()

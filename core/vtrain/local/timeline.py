"""What `vtrain local run` adds to the job's timeline: launches, kills, exits, the job's end.

The job's `timeline/` folder (beside its checkpoints, as on a platform) holds a file
per replica and attempt, which each trainer writes (VTRAIN_TIMELINE_FILE, named
here), and `launcher.jsonl`, this one's: each process's launch (its pid), each
--kill, each process's end (its status), and the job's end. A folder
used by an earlier job is emptied first: its lanes are not this job's.
"""

from __future__ import annotations

import contextlib
import os

from vtrain.timeline.events import (
    ENDED,
    FOLDER,
    JOB_END,
    KILL,
    LAUNCH,
    LAUNCHER_FILE,
    replica_file,
)
from vtrain.timeline.recorder import FILE_VARIABLE, Recorder


class LauncherTimeline:
    """The job's timeline folder, and the launcher's own file in it."""

    def __init__(self, trial_dir: str) -> None:
        self.folder = os.path.join(trial_dir, FOLDER)
        os.makedirs(self.folder, exist_ok=True)
        for entry in os.scandir(self.folder):
            if entry.name.endswith(".jsonl"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        self._own = Recorder(os.path.join(self.folder, LAUNCHER_FILE))

    def give(self, env: dict[str, str], replica: str, attempt: int) -> None:
        """Name the file of `replica`'s attempt `attempt` (1 for its first run) in its `env`."""
        env[FILE_VARIABLE] = os.path.join(self.folder, replica_file(replica, attempt))

    def launched(self, replica: str, attempt: int, pid: int, after_kill: str | None) -> None:
        """`replica`'s attempt `attempt` runs as `pid` (after the --kill `after_kill`)."""
        self._own.record(LAUNCH, replica=replica, attempt=attempt, pid=pid, after_kill=after_kill)

    def killed(self, kill: str) -> None:
        """The --kill `kill` (ROLE:INDEX@SECONDS[:SIGNAL]) was sent."""
        replica, _, rest = kill.partition("@")
        signal = rest.partition(":")[2] or "KILL"
        self._own.record(KILL, replica=replica.replace(":", "-"), signal=signal)

    def ended(self, replica: str, attempt: int, status: int, at: float) -> None:
        """`replica`'s attempt `attempt` ended with `status` (-N: signal N) at `at`."""
        self._own.record(ENDED, t=at, replica=replica, attempt=attempt, status=status)

    def job_end(self, outcome: str, status: int, seconds: float) -> None:
        """The job ended as `outcome` with `status`, `seconds` after it began."""
        self._own.record(JOB_END, outcome=outcome, status=status, seconds=round(seconds, 3))
        self._own.close(exiting=False)

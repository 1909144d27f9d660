"""What a rehearsal saw of each replica's runs, gathered by the supervisor for the verdict."""

from __future__ import annotations

import os

from vtrain.local.disks import Disk


class Run:
    """One run of one replica: where it ran, how it started and ended, what it wrote and said."""

    def __init__(
        self, name: str, number: int, disk: Disk | None, record: str, after_kill: str | None
    ) -> None:
        self.name = name
        self.number = number
        self.disk = disk
        self.record = record
        """The probe's file (`vtrain.local.probe`): what its Python code wrote, bound, connected."""
        self.after_kill = after_kill
        """The --kill this run restarts after (its own or a peer's), e.g. ``worker:0@5:KILL``."""
        self.committed: int | None = None
        """The newest committed checkpoint step when it started, or -1 for files of another kind."""
        self.exit_code: int | None = None
        self.refused: str | None = None
        self.head: list[str] = []
        self.tail: list[str] = []
        self.written: list[str] = []
        self.started = 0.0
        """time.time() as it started."""
        self.ended = 0.0
        """time.time() as it ended (0 while it runs)."""
        self.pid: int | None = None
        """Its process's pid once started (the watcher attributes writes through it)."""
        self.seen: list[tuple[str, str]] = []
        """What the watcher (`vtrain.local.watch`) saw it do, whatever wrote: ``("write", PATH)``
        for a file written or renamed into place, ``("read", PATH)`` for one it opened only to
        read (once closed)."""

    def probed(self) -> list[tuple[str, str]]:
        """The probe's (kind, value) lines: ``("write", PATH)``, ``("bind", HOST:PORT)``..."""
        try:
            with open(self.record, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:  # no Python ran (a shell script), or it died before its probe wrote
            lines = []
        probed = [tuple(line.split("\t", 1)) for line in lines if "\t" in line]
        return probed + self.seen  # type: ignore[return-value]


class Evidence:
    """Every run of every replica, their sockets, and the job's addresses and folders."""

    def __init__(
        self,
        hosts: dict[str, str],
        ports: dict[str, int],
        separate_hosts: bool,
        model_dir: str,
        checkpoint_dir: str,
        metric_files: dict[str, str],
        metric_id: str | None,
    ) -> None:
        self.hosts = hosts
        self.ports = ports
        self.separate_hosts = separate_hosts
        self.model_dir = model_dir
        self.checkpoint_dir = checkpoint_dir
        self.metric_files = metric_files
        self.metric_id = metric_id
        self.runs: list[Run] = []
        self.sockets: set[tuple[str, str, str, str]] = set()
        self.succeeded = False
        self.outcome = ""
        """How the job ended (`vtrain.local.result`: succeeded, failed, timed out...)."""
        self.reason = ""
        """Why, as the summary's last line says it."""
        self.ended_by: str | None = None
        """The replica whose exit ended a failed job (None: no replica's, or none failed)."""
        self.seconds = 0.0
        """From the replicas' start to the job's end."""
        self.shared_disk = False
        self.platform = "vertex"
        self.no_model = False
        """The job writes no model by design (--no-model): `leader` only watches for duplicates."""
        self.kills: list[str] = []
        """Each --kill of the plan, as given (``worker:0@30``)."""
        self.fired: list[str] = []
        """The --kills that were sent."""
        self.not_checked: list[str] = []
        """What this machine kept the rehearsal from checking (``not checked: ...`` lines)."""
        self.trial_dir = ""
        """The trial's folder under --output-dir (its disks, logs, records)."""
        self.shared: list[str] = []
        """More shared places than the AIP_* folders and /gcs (a stand-in's view of a bucket)."""
        self.not_rehearsed: list[str] = []
        """What no local rehearsal can reproduce (accelerators, machine types...)."""


def newest_checkpoint(folder: str) -> int | None:
    """The newest committed step under `folder` (vtrain's layout, up to two levels down);
    -1 when it holds files of another layout; None when it holds nothing."""
    # Only here: vtrain.checkpoints loads the whole checkpoint package, which the start of
    # a rehearsal does not need (issue 31: start -> chief exit within 1.2x of a bare launcher).
    from vtrain.checkpoints.layout import MARKER, parse_step_folder

    newest: int | None = None
    other = False
    for top, dirs, files in os.walk(folder):
        depth = os.path.relpath(top, folder).count(os.sep)
        step = parse_step_folder(os.path.basename(top))
        if step is not None and MARKER in files:
            newest = step if newest is None else max(newest, step)
            dirs[:] = []
        elif files:
            other = True
        if depth >= 2:
            dirs[:] = []
    if newest is None and other:
        return -1
    return newest

"""`CheckpointManager`: numbered checkpoints that survive restarts, preemption and kills."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

from vtrain.checkpoints.checkpoint import Checkpoint
from vtrain.checkpoints.commit import delete_step, save_step
from vtrain.checkpoints.layout import (
    MARKER,
    check_step,
    is_leftover,
    parse_step_folder,
    step_folder,
)
from vtrain.checkpoints.payload import PayloadLike, as_payload
from vtrain.checkpoints.restore import committed_manifest, load, read_manifest, step_candidates
from vtrain.errors import CheckpointError, UsageError
from vtrain.storage.location import Location, open_location

TRIAL_PREFIX = "trial-"


def _check_count(value: object, argument: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(
            "not a positive count", source=argument, value=value, expected="an int >= 1 or None"
        )
    return value


def _same_folder(a: str, b: str | None) -> bool:
    return b is not None and a.rstrip("/") == b.rstrip("/")


class CheckpointManager:
    """Save, list and restore numbered checkpoints in one folder, safely across restarts.

    `directory` defaults to the run's checkpoint folder (`AIP_CHECKPOINT_DIR`, or
    the local layout, already one per tuning trial); an explicit directory gets
    a `trial-<id>` subfolder under tuning unless `per_trial=False`. Only the leader
    writes there (the chief, or the replica a plugin exported in VTRAIN_LEADER;
    `is_leader` defaults from the cluster); any other replica saves
    into a private temporary folder, or `private_directory`, and reads the
    leader's. `keep=N` keeps the newest N committed steps, plus every step that is
    a multiple of `keep_every`; None keeps them all.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        keep: int | None = None,
        keep_every: int | None = None,
        is_leader: bool | None = None,
        environ: Mapping[str, str] | None = None,
        fuse: bool | None = None,
        gcs_mount: str | None = None,
        private_directory: str | os.PathLike[str] | None = None,
        per_trial: bool = True,
        client: Any = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self.keep = _check_count(keep, "keep")
        self.keep_every = _check_count(keep_every, "keep_every")
        from vtrain.cluster import ClusterInfo

        # Read even when `is_leader` is given: the trial decides the folder either way.
        info = ClusterInfo.from_env(env)
        if is_leader is None:
            from vtrain.cluster.leader import leads

            is_leader = leads(info, env)
        trial = info.trial_id  # checked, from CLUSTER_SPEC/TF_CONFIG or CLOUD_ML_TRIAL_ID
        if directory is None:
            from vtrain.context import RunContext

            folder = RunContext.from_env(env, trial_id=trial).checkpoint_dir
        else:
            folder = os.fspath(directory)
            # The platform's own folder is already one per trial; any other would be shared.
            if per_trial and trial and not _same_folder(folder, env.get("AIP_CHECKPOINT_DIR")):
                folder = folder.rstrip("/") + "/" + TRIAL_PREFIX + trial
        self._options: dict[str, Any] = {
            "gcs_mount": gcs_mount,
            "fuse": fuse,
            "environ": env,
            "client": client,
        }
        self.is_leader = bool(is_leader)
        self.location: Location = open_location(folder, **self._options)
        self._private = None if private_directory is None else os.fspath(private_directory)
        self._writer: Location | None = self.location if self.is_leader else None
        self._cleaned = False
        # Steps with a folder in the write location, as `cleanup` found them plus those saved
        # since: a save of any other step starts from an empty folder and need not list it.
        self._present: set[int] = set()

    @property
    def directory(self) -> str:
        """The shared checkpoint folder every replica reads (a path or gs:// URI)."""
        return self.location.uri

    @property
    def write_location(self) -> Location:
        """Where this replica's saves go: the shared folder on the leader, else a private one."""
        if self._writer is None:
            import tempfile  # here, not at the top: `import vtrain` stays light

            private = self._private
            if private is None:
                import shutil
                import weakref

                private = tempfile.mkdtemp(prefix="vtrain-checkpoints-")
                # Ours, not the user's: gone with the manager, or a restarted replica
                # would leave one behind per restart.
                weakref.finalize(self, shutil.rmtree, private, ignore_errors=True)
            self._writer = open_location(private, **self._options)
        return self._writer

    def save(self, step: int, payload: PayloadLike) -> str:
        """Write and commit one step; return the committed step folder.

        `payload` is bytes, a mapping of file names to bytes, or a callable that
        writes files into the local folder it is given (`torch.save`, Keras,
        an XGBoost booster). Steps already there are replaced atomically.
        """
        location = self.write_location
        where = f"{location.uri}: save"
        step = check_step(step, where)
        content = as_payload(payload, f"{location.uri}: step {step}")
        if not self._cleaned:
            self.cleanup()
        manifest = save_step(location, step, content, fresh=step not in self._present)
        self._present.add(step)
        self._retain(location, manifest.step)
        return location.join(step_folder(step)).uri

    def steps(self) -> list[int]:
        """The committed steps in the shared folder, in ascending order."""
        return self._committed(self.location)

    def latest_step(self) -> int | None:
        """The newest committed step, or None when there is none."""
        for step in reversed(step_candidates(self.location)):
            if committed_manifest(self.location, step) is not None:
                return step
        return None

    def restore(self, step: int | None = None, *, into: str | None = None) -> Checkpoint | None:
        """Read a committed step (default: the newest that verifies) and check every byte.

        Returns None when nothing is committed yet. With `step=None` a step that
        fails its manifest is reported as a warning and the next older one is
        tried, so a restarted job resumes; an explicit step that fails raises.
        `into` is where a callable's checkpoint on FUSE or gs:// is copied; without
        it the copy goes to a temporary folder that `Checkpoint.close()` (or leaving
        `with manager.restore() as ckpt:`) removes.
        """
        location = self.location
        if step is not None:
            step = check_step(step, f"{location.uri}: restore")
            try:
                manifest = read_manifest(location, step)
            except CheckpointError as e:
                committed = f"the committed steps are {self.steps()}"
                raise CheckpointError(
                    e.problem,
                    source=e.source,
                    value=e.value,
                    expected=e.expected,
                    hint=f"{e.hint}; {committed}" if e.hint else committed,
                ) from e
            return load(location, manifest, into=into)
        failures: list[str] = []
        for candidate in reversed(step_candidates(location)):
            found = committed_manifest(location, candidate)
            if found is None:
                continue
            try:
                return load(location, found, into=into)
            except CheckpointError as e:
                warnings.warn(f"{e}; trying an older step", RuntimeWarning, stacklevel=2)
                failures.append(str(candidate))
        if failures:
            raise CheckpointError(
                "no committed step passes its manifest check",
                source=location.uri,
                value=", ".join(failures),
                expected="at least one intact step",
                hint="the warnings above name each damaged file",
            )
        return None

    def cleanup(self) -> list[str]:
        """Remove what interrupted saves and deletes left in this replica's folder; list it."""
        location = self.write_location
        removed = []
        self._present.clear()
        for name in location.list():
            step = parse_step_folder(name)
            if is_leftover(name):
                location.remove(name)
                removed.append(name)
            elif step is not None:
                manifest = committed_manifest(location, step)
                if manifest is None:
                    location.remove(name)
                    removed.append(name)
                    continue
                self._present.add(step)
                inside = location.join(name)
                for entry in inside.list():
                    if entry not in (MARKER, manifest.folder):
                        inside.remove(entry)
                        removed.append(f"{name}/{entry}")
        self._cleaned = True
        return removed

    def _committed(self, location: Location) -> list[int]:
        return [s for s in step_candidates(location) if committed_manifest(location, s) is not None]

    def _retain(self, location: Location, saved: int) -> None:
        # A private folder is never read back: keep only what the framework may still need.
        keep = self.keep if location is self.location else (self.keep or 1)
        if keep is None:
            return
        steps = self._committed(location)
        newest = set(steps[-keep:])
        for step in steps:
            kept = step in newest or step == saved
            if not kept and not (self.keep_every and step % self.keep_every == 0):
                delete_step(location, step)
                self._present.discard(step)

    def __repr__(self) -> str:
        return (
            f"CheckpointManager({self.directory!r}, keep={self.keep}, "
            f"keep_every={self.keep_every}, is_leader={self.is_leader})"
        )

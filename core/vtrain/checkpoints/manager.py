"""`CheckpointManager`: numbered checkpoints that survive restarts, preemption and kills."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from vtrain.checkpoints.background import PendingSave, snapshot
from vtrain.checkpoints.checkpoint import Checkpoint
from vtrain.checkpoints.commit import delete_step, linked, save_step
from vtrain.checkpoints.layout import (
    MARKER,
    check_step,
    is_leftover,
    parse_step_folder,
    step_folder,
)
from vtrain.checkpoints.lease import Lease, hold, identity
from vtrain.checkpoints.manifest import Manifest
from vtrain.checkpoints.payload import Payload, PayloadLike, as_payload
from vtrain.checkpoints.restore import committed_manifest, load, read_manifest, step_candidates
from vtrain.errors import CheckpointError, UsageError
from vtrain.log import logger
from vtrain.storage.location import Location
from vtrain.storage.opener import open_location
from vtrain.storage.staging import remove_stale_staging

TRIAL_PREFIX = "trial-"
log = logger(__name__)


def _check_count(value: object, argument: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(
            "not a positive count", source=argument, value=value, expected="an int >= 1 or None"
        )
    return value


def _inspect(location: Location, step: int) -> tuple[Manifest | None, str | None]:
    """(manifest, None) for a committed step, (None, None) for an interrupted save's
    leftover, (None, why) for a folder that is neither: damage."""
    try:
        return read_manifest(location, step), None
    except CheckpointError as e:
        marker_there = location.exists(f"{step_folder(step)}/{MARKER}")
        if marker_there or location.atomic_rename:
            return None, e.problem
        return None, None


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
    a multiple of `keep_every`; None keeps them all. `resume_from` names another
    job's checkpoint folder that `restore()` reads while this one has no committed
    step (VTRAIN_RESUME_FROM: a new job that continues an old one). `environ`
    (default `os.environ`) is where the cluster, the run's folders and the storage
    settings are read; `gcs_mount`, `fuse` and `client` are `open_location`'s.
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
        resume_from: str | os.PathLike[str] | None = None,
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
            from vtrain.variables import RESUME_FROM

            folder = RunContext.from_env(env, trial_id=trial).checkpoint_dir
            if resume_from is None:
                resume_from = env.get(RESUME_FROM) or None
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
        self._identity = identity(env, info.role, info.index)
        self._lease: Lease | None = None
        self.is_leader = bool(is_leader)
        self.location: Location = open_location(folder, **self._options)
        self.resume_from = None if resume_from is None else os.fspath(resume_from)
        """Another job's checkpoint folder, only read: `restore()` falls back to it."""
        self._private = None if private_directory is None else os.fspath(private_directory)
        self._writer: Location | None = self.location if self.is_leader else None
        self._cleaned = False
        self._pending: PendingSave | None = None
        # The buffers of the last background snapshot, reused by the next (see `snapshot`).
        self._staging: dict[str, bytearray] = {}
        # Step folders that are there but not intact: kept for a person to look at, never
        # removed by cleanup or retention.
        self._damaged: set[int] = set()
        # Steps with a folder in the write location, as `cleanup` found them plus those saved
        # since: a save of any other step starts from an empty folder and need not list it.
        self._present: set[int] = set()

    def retain(self, keep: int | None = None, keep_every: int | None = None) -> CheckpointManager:
        """Keep the newest `keep` steps, plus every multiple of `keep_every`, from the next save.

        For a manager made elsewhere (a handle's `checkpoints`); returns the manager.
        """
        self.keep = _check_count(keep, "keep")
        self.keep_every = _check_count(keep_every, "keep_every")
        return self

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

    def save(self, step: int, payload: PayloadLike, *, blocking: bool = True) -> str:
        """Write and commit one step; return the step folder.

        `payload` is bytes, a mapping of file names to bytes, or a callable that
        writes files into the local folder it is given (`torch.save`, Keras,
        an XGBoost booster). Steps already there are replaced atomically.

        With `blocking=False` the call returns once the payload is its own
        (buffers copied unless they are `bytes`, a callable run into a staging
        folder, a `Snapshot` callable not run yet), and the step is committed
        in the background: it counts once `wait()` returns. A previous pending
        save is waited for first, and its failure raised here.
        """
        self.wait()
        location = self.write_location
        where = f"{location.uri}: save"
        step = check_step(step, where)
        content = as_payload(payload, f"{location.uri}: step {step}")
        self._hold(location)
        if not self._cleaned:
            self.cleanup()
        uri = location.join(step_folder(step)).uri
        if blocking:
            self._timed(location, step, content, background=False)
        else:
            staged = snapshot(content, location, step, self._staging)
            self._pending = PendingSave(
                step, uri, lambda: self._timed(location, step, staged, background=True)
            )
        return uri

    def _timed(self, location: Location, step: int, content: Payload, *, background: bool) -> None:
        """`_commit`, its time recorded in the process's timeline."""
        from vtrain.timeline import recorder
        from vtrain.timeline.events import COMMITTED

        began = time.monotonic()
        self._commit(location, step, content)
        seconds = round(time.monotonic() - began, 4)
        recorder().record(COMMITTED, step=step, seconds=seconds, background=background)

    def _hold(self, location: Location) -> None:
        """Hold the write location's lease (see `lease`), or raise naming who holds it."""
        if location is not self.location and self._private is None:
            return  # a temporary folder this process made for itself: no one else writes it
        if self._lease is None:
            self._lease = hold(location, self, *self._identity)
        self._lease.check()

    def _commit(self, location: Location, step: int, content: Payload) -> None:
        self._hold(location)  # a lease lost while this save waited is not written through
        if step in self._damaged and location.path is not None:
            self._set_aside(location, step)
        fresh = step not in self._present and step not in self._damaged
        save_step(location, step, content, fresh=fresh)
        self._present.add(step)
        self._retain(location, step)

    @property
    def pending_step(self) -> int | None:
        """The step a background save is still writing, or None."""
        pending = self._pending
        return None if pending is None or pending.done else pending.step

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the pending background save; raise its failure as a `CheckpointError`.

        Returns True when nothing is pending any more, False when `timeout`
        seconds passed first. A failed save is reported once, and never committed.
        """
        pending = self._pending
        if pending is None:
            return True
        if not pending.join(timeout):
            return False
        self._pending = None
        failure = pending.failure()
        if failure is None:
            return True
        raise failure from pending.error

    def close(self) -> None:
        """Wait for a pending save (raising its failure) and free the staging buffers that
        background saves keep between calls; the manager stays usable."""
        try:
            self.wait()
        finally:
            self._staging.clear()

    def __enter__(self) -> CheckpointManager:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None:
            self.close()
        else:
            # Already failing: let the pending save finish, without hiding the first error.
            pending = self._pending
            if pending is not None:
                pending.join()

    def steps(self) -> list[int]:
        """The committed steps in the shared folder, in ascending order (after a pending save)."""
        self.wait()
        return self._committed(self.location)

    def latest_step(self) -> int | None:
        """The newest committed step, or None when there is none (after a pending save)."""
        self.wait()
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
        `with manager.restore() as ckpt:`) removes. A pending save of this manager
        is waited for first.
        """
        self.wait()
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
            found, problem = _inspect(location, candidate)
            if found is None:
                if problem is not None:
                    log.warning(
                        f"vtrain: {location.uri}: step {candidate} does not verify ({problem}); "
                        "trying an older step"
                    )
                continue
            try:
                return load(location, found, into=into)
            except CheckpointError as e:
                log.warning(f"vtrain: {e}; trying an older step")
                failures.append(str(candidate))
        if failures:
            raise CheckpointError(
                "no committed step passes its manifest check",
                source=location.uri,
                value=", ".join(failures),
                expected="at least one intact step",
                hint="the warnings above name each damaged file",
            )
        if self.resume_from is not None:
            # A new job that continues an old one: until it commits a step of its own it
            # starts from the old job's newest. Read as a non-leader: nothing is written there.
            other = CheckpointManager(
                self.resume_from, is_leader=False, per_trial=False, **self._options
            )
            older = other.restore(into=into)
            if older is None:
                # Asked to continue and nothing to continue from: a typo, not a fresh start.
                raise CheckpointError(
                    "no committed step to continue from",
                    source=self.resume_from,
                    expected="the checkpoint folder of a job that committed a step",
                    hint="VTRAIN_RESUME_FROM (--resume-from) names it: the old job's "
                    "AIP_CHECKPOINT_DIR",
                )
            return older
        return None

    def cleanup(self) -> list[str]:
        """Remove what interrupted saves and deletes left in this replica's folder; list it.

        The local staging folders of a process that is gone are removed as well.

        A step folder that cannot be an interrupted save (a marker that is there
        but damaged; on a local disk, where steps appear by rename, any step
        without a valid marker) is reported as a warning and kept, not removed.
        A step folder that is a link to another run's step is never cleaned inside.
        """
        self.wait()
        location = self.write_location
        self._hold(location)
        # Local copies that saves and restores of a killed process left in the temporary folder.
        remove_stale_staging()
        removed = []
        self._present.clear()
        self._damaged.clear()
        for name in location.list():
            step = parse_step_folder(name)
            if is_leftover(name):
                location.remove(name)
                removed.append(name)
            elif step is not None:
                manifest, problem = _inspect(location, step)
                if manifest is None and problem is None:
                    location.remove(name)
                    removed.append(name)
                    continue
                if manifest is None:
                    self._damaged.add(step)
                    log.warning(
                        f"vtrain: {location.join(name).uri}: a finished step that does not "
                        f"verify ({problem}); kept as it is, and left out of resume and retention"
                    )
                    continue
                self._present.add(step)
                if linked(location, step):
                    continue
                inside = location.join(name)
                for entry in inside.list():
                    if entry not in (MARKER, manifest.folder):
                        inside.remove(entry)
                        removed.append(f"{name}/{entry}")
        self._cleaned = True
        return removed

    def _set_aside(self, location: Location, step: int) -> None:
        # A save of a damaged step's number moves the damaged folder out of the way, under a
        # name no cleanup or listing touches, instead of writing over what is left of it.
        assert location.path is not None
        name = step_folder(step)
        aside = f"damaged-{name}-{os.urandom(4).hex()}"
        os.rename(os.path.join(location.path, name), os.path.join(location.path, aside))
        self._damaged.discard(step)
        log.warning(f"vtrain: {location.join(name).uri}: the damaged step was moved to {aside}")

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

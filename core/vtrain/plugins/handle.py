"""`Handle`: what every plugin's `configure()` returns, in one vocabulary across frameworks.

Each framework's handle speaks these words with the same meaning and return
shape, so a user who has read one knows the other three:

- `rank`, `world_size`: this trainer's place among the trainers of the
  collective (None and 0 on a replica that does not train; 0 of 1 alone);
- `is_leader`, `role`: whether this replica writes shared artifacts, and its role;
- `checkpoints`: the job's leader-aware `CheckpointManager`;
- `resume(...)`: load the newest committed checkpoint, return a `Resumed` (the leader logs it);
- `save_checkpoint(step, *objects, data=..., **extra)`: commit a step from the leader;
- `preempted`: True on every trainer once any trainer got SIGTERM;
- `save_model(model)`: write the model to AIP_MODEL_DIR from the leader;
- `report(value, tag=...)`: the tuning metric, from the leader;
- `track`: the job's run (`params`, `metrics`, `artifact`, `tags`), written by the leader,
  one run across restarts;
- `share(split)`, `shard(items)`: this trainer's part of the input;
- `stream(split, resume=found)`: its records with a position, going on where a commit stood;
  `batches(stream, batch_size=...)`: the framework's batches of it;
- `step(n=None)`: a step of a hand-written loop ended (the plugins' callbacks, `batches` and
  `save_checkpoint` say so themselves); `long(what, seconds)`: a block that may make no
  progress for that long (an evaluation) without being taken for a hang; `progress`: the
  step count, step rate and last commit the watchdog and the rehearsal read;
- `distributed`, `barrier()`, `close(ok=True)` (`with handle:` calls it).

A plugin implements hooks, never these words: `_write_state` and `_read_state` (how
its objects are written into a step and read back), `_release` (leaving the
framework), `_batches`, and where its framework needs them `_agree_preempted`,
`_gather_position`, `_leave_preempted`, `_sigterm_here`, `_resume`.

Framework-native objects keep their native names on each handle (`strategy`,
`kvstore`, `trainer()`, `callbacks()`). A handle keeps the environment it was
configured with: nothing it does reads `os.environ` again.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, TypeVar

from vtrain.cluster import ClusterInfo
from vtrain.errors import UsageError
from vtrain.log import logger
from vtrain.progress import tracker

# Checkpoints, data and the run context load when first used: a serving replica never does.
if TYPE_CHECKING:
    from vtrain.checkpoints import Checkpoint, CheckpointManager
    from vtrain.checkpoints.payload import PayloadLike
    from vtrain.context import RunContext
    from vtrain.data import Share, Stream
    from vtrain.progress.file import Snapshot
    from vtrain.track import Track

log = logger(__name__)

COMMIT_SECONDS = 3600.0
"""How long a commit or a model's upload the loop waits for may take before the watchdog
judges it: an upload of many GB to a bucket, not a step."""
_nothing = contextlib.nullcontext

H = TypeVar("H", bound="Handle")
T = TypeVar("T")


@dataclass(frozen=True)
class Resumed:
    """What `handle.resume(...)` loaded: how far training had got, and from where.

    `done` counts what the checkpoint had completed, in the unit the plugin
    saves by (PyTorch steps, Keras epochs, XGBoost rounds; MXNet the loop's own count,
    epochs or steps): continue
    from there. A fresh start is ``Resumed()``: 0 done, no checkpoint, falsy.
    """

    done: int = 0
    """Steps, epochs or rounds completed; 0 when nothing was committed yet."""
    uri: str | None = None
    """The checkpoint that was loaded; None on a fresh start."""
    state: Any = None
    """What could not be loaded in place (XGBoost's booster); None elsewhere."""
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """What was saved beside the state (`save_checkpoint(..., **extra)`)."""
    data: Mapping[str, Any] | None = None
    """Every trainer's data position at that step, merged (`save_checkpoint(..., data=stream)`):
    `handle.stream(split, resume=found)` goes on from it. None when the step holds none."""

    def __bool__(self) -> bool:
        return self.uri is not None

    def describe(self) -> str:
        """One line for the log: where the run resumed, or that it starts fresh."""
        if self.uri is None:
            return "vtrain: no committed checkpoint; starting fresh"
        return f"vtrain: resumed from {self.uri} ({self.done} done)"


@dataclass
class _Life:
    """What a handle learns as it runs (it is frozen; this is not): preempted, closed."""

    preempted: bool = False
    closed: bool = False


@dataclass(frozen=True)
class Handle:
    """This replica's place in the job, and the helpers every framework shares."""

    info: ClusterInfo
    """The cluster `configure` read: this replica's role, index and peers."""
    is_leader: bool
    """True on the one replica (and process) that writes shared artifacts."""
    environ: Mapping[str, str] = field(
        default_factory=lambda: os.environ, kw_only=True, repr=False, compare=False
    )
    """The environment `configure` read and wrote; storage and metric settings come from it."""

    model_name: ClassVar[str] = "model"
    """The file `save_model` writes by default (what the framework's serving tools load)."""
    saves_collectively: ClassVar[bool] = False
    """True when every replica must take part in writing the model (TensorFlow's saves)."""
    checkpoint_subfolder: ClassVar[str | None] = None
    """A subfolder of AIP_CHECKPOINT_DIR for `checkpoints` (Keras keeps its own)."""

    def __post_init__(self) -> None:
        # A handle is made once the framework is set up: the timeline's end of start-up.
        from vtrain.timeline import recorder
        from vtrain.timeline.events import READY

        recorder().record(READY)
        if self.is_leader:  # Kubeflow Trainer's status endpoint, where it names one
            from vtrain.trainjob.status_reporter import start_reporting

            start_reporting(self.environ)

    # -- where this replica is --------------------------------------------------------------

    @property
    def role(self) -> str:
        """chief, worker, ps, evaluator or reduction_server."""
        return self.info.role

    @property
    def rank(self) -> int | None:
        """This trainer's rank in the collective; None on a replica that does not train."""
        return self.info.rank

    @property
    def world_size(self) -> int:
        """How many trainers the collective has: 1 alone, 0 on a replica that does not train."""
        return 0 if self.info.rank is None else self.info.num_trainers

    @property
    def distributed(self) -> bool:
        """True when this trainer is one of several in the collective."""
        return self.world_size > 1

    @functools.cached_property
    def _life(self) -> _Life:
        return _Life()

    @functools.cached_property
    def context(self) -> RunContext:
        """The run's folders and ids, read from the environment `configure` was given."""
        from vtrain.context import RunContext

        return RunContext.from_env(self.environ, trial_id=self.info.trial_id)

    # -- input ------------------------------------------------------------------------------

    def share(
        self,
        split: str = "training",
        *,
        by_record: bool = False,
        uri: str | None = None,
        client: Any = None,
    ) -> Share:
        """This trainer's share of `split` (see vtrain.data.files), dealt by `rank` of `world_size`.

        Off the collective (an evaluator, a ps) vtrain.data's placement decides:
        the validation split whole, nothing else. `by_record`, `uri` and `client` are
        `vtrain.data.files`'s: every file with a record stride, another pattern than
        the split's variable, a storage client to share.
        """
        from vtrain.data import files

        rank, world_size = (None, None) if self.rank is None else self._place("share")
        return files(
            split,
            rank=rank,
            world_size=world_size,
            by_record=by_record,
            uri=uri,
            environ=self.environ,
            client=client,
        )

    def shard(self, items: Sequence[T]) -> list[T]:
        """This trainer's share of `items` (files, say): every world_size-th, from `rank`.

        A string (a pattern, not a list) raises `UsageError`, as does a replica that does
        not train.
        """
        from vtrain.data.shares import deal

        if isinstance(items, (str, bytes)):
            # A pattern is one item, not a list: dealt, it would be cut into characters.
            raise UsageError(
                "not a list of items",
                source="shard",
                value=items,
                expected="a list or tuple (of file names, say); expand a pattern first",
                hint="vtrain.data.files() or handle.share() expand and deal a split's pattern",
            )
        rank, world_size = self._place("shard")
        return list(deal(items, rank, world_size))

    def stream(
        self,
        split: str = "training",
        *,
        resume: Resumed | Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Stream:
        """This trainer's records of `split`, epoch after epoch, positioned where `resume` stood.

        `resume` is what `resume()` returned (its `data`, the position saved with the
        step) or a position from `vtrain.data.merge_states`; what was left of its epoch
        is dealt among this job's trainers, however many saved it; given what `resume()`
        returned, the leader says so in the log. `options` are `vtrain.data.stream`'s
        (`shuffle_seed`, `buffer`, `format` … as when it was saved). `batches(stream)`
        feeds it to the framework.
        """
        from vtrain.data import stream
        from vtrain.data.saved_position import describe_resume

        position = resume.data if isinstance(resume, Resumed) else resume
        rank, world_size = (None, None) if self.rank is None else self._place("stream")
        made = stream(
            split,
            rank=rank,
            world_size=world_size,
            resume=position,
            environ=self.environ,
            **options,
        )
        if self.is_leader and isinstance(resume, Resumed) and resume:
            log.info(describe_resume(self._step_of(resume), position, made.world_size))
        return made

    def batches(self, stream: Stream, *, batch_size: int, **options: Any) -> Any:
        """`stream`'s records as this framework's batches, `batch_size` records per trainer
        and step; a save with `data=stream` commits the position after the last batch taken.

        `options` are the framework's own (columns, a transform, a signature: see its
        handle). A handle whose framework takes no batches raises `UsageError`.
        """
        return self._batches(stream, batch_size=batch_size, **options)

    if TYPE_CHECKING:
        # Each framework's batches take its own keywords (columns, a transform, a signature).
        _batches: ClassVar[Callable[..., Any]]
    else:

        def _batches(self, stream: Stream, *, batch_size: int, **options: Any) -> Any:
            """Hook: the framework's batches of `stream` (see `batches`)."""
            raise UsageError(
                f"{type(self).__name__} takes no batches from a stream",
                source="batches",
                value=type(self).__name__,
                expected="a framework that takes batches (PyTorch, TensorFlow, MXNet, XGBoost)",
                hint="iterate the stream's records yourself: for record in stream",
            )

    def _step_of(self, resume: Resumed) -> int:
        """The step `resume` committed, for the log: its `done`, unless the plugin counts
        `done` in another unit (Keras' epochs)."""
        return resume.done

    def _place(self, what: str) -> tuple[int, int]:
        """Which part of the input this trainer reads, as (k, n); a UsageError off the collective.

        (rank, world_size), unless the framework feeds its workers another way: a
        plugin overrides this, not `share` or `shard`, so the words keep one meaning.
        """
        if self.rank is None:
            raise UsageError(
                f"{_article(self.role)} {self.role} replica has no share: it does not train",
                source=what,
                value=self.role,
                expected="a chief or worker replica (check handle.rank is not None first)",
            )
        return self.rank, max(1, self.world_size)

    # -- checkpoints, the model, the metric -------------------------------------------------

    @functools.cached_property
    def checkpoints(self) -> CheckpointManager:
        """The job's CheckpointManager: the leader writes AIP_CHECKPOINT_DIR (one per trial).

        Until the job commits a step its `restore()` reads VTRAIN_RESUME_FROM's, where set.
        """
        return self.checkpoint_manager()

    def checkpoint_manager(
        self,
        directory: str | None = None,
        *,
        keep: int | None = None,
        keep_every: int | None = None,
    ) -> CheckpointManager:
        """`checkpoints`, or the manager of the folder `directory` (a `trial-<id>` subfolder
        under tuning).

        `keep` and `keep_every` set the retention of the manager returned (see
        CheckpointManager); the default folder has one manager per handle.
        """
        if directory is None and "checkpoints" in self.__dict__:
            manager: CheckpointManager = self.__dict__["checkpoints"]
        else:
            from vtrain.checkpoints import CheckpointManager
            from vtrain.variables import RESUME_FROM

            folder = directory
            if folder is None and self.checkpoint_subfolder is not None:
                folder = os.path.join(self.context.checkpoint_dir, self.checkpoint_subfolder)
            # The job's own folder only: an old job's steps are no other folder's start.
            older = (self.environ.get(RESUME_FROM) or None) if directory is None else None
            if older is not None and self.checkpoint_subfolder is not None:
                older = older.rstrip("/") + "/" + self.checkpoint_subfolder
            manager = CheckpointManager(
                folder,
                is_leader=self.is_leader,
                environ=self.environ,
                per_trial=directory is not None,
                resume_from=older,
            )
            if directory is None:
                self.__dict__["checkpoints"] = manager  # the cached property's own slot
        if keep is not None or keep_every is not None:
            manager.retain(keep, keep_every)
        return manager

    def _made_checkpoints(self) -> CheckpointManager | None:
        """The handle's manager if `checkpoints` was used; None (making none) if not."""
        manager: CheckpointManager | None = self.__dict__.get("checkpoints")
        return manager

    def save_checkpoint(
        self,
        step: int,
        *objects: Any,
        blocking: bool = False,
        data: Any = None,
        **extra: Any,
    ) -> str | None:
        """Commit `step` of `objects` (the framework's: a model and its optimizer, a net and
        its trainer, a booster) and `extra` from the leader; the step's folder there, else None.

        `extra` comes back in `resume()`'s `Resumed.extra`. The step is committed in the
        background unless `blocking`; the next save, `close()` and the end of the script
        wait for it (a save that fails at the end makes the script exit 1). With `data`
        (the stream trained on) every trainer's position is committed with the step.
        Every trainer calls it at the same steps, as for any collective.

        Once `preempted` (SIGTERM on any trainer: SIGKILL follows 30 s later) this save is
        the last: the leader commits it before returning and says `committed step N`, the
        trainers meet, and every process exits 143, so that the platform restarts the job
        and it resumes there.
        """
        from vtrain.timeline import recorder
        from vtrain.timeline.events import COMMIT, PREEMPT_COMMIT

        began = time.monotonic()
        preempted = self.preempted
        position = None if data is None else self._gather_position(step, data)
        manager = self.checkpoints
        tracker().reached(step, committed=manager.is_leader)
        now = blocking or preempted
        # A commit the loop waits for (and the peers, for a preemption's) is no step: it is
        # bounded by its own waits, not by the step's.
        with tracker().long("the checkpoint commit", COMMIT_SECONDS) if now else _nothing():
            where = None
            if manager.is_leader:
                payload = self._write_state(step, objects, extra, position, blocking=now)
                where = manager.save(step, payload, blocking=now)
            held = round(time.monotonic() - began, 4)  # what the loop waited for
            if not preempted:
                recorder().record(COMMIT, step=step, held=held)
                return where
            recorder().record(PREEMPT_COMMIT, step=step, held=held)
            if where is not None:
                from vtrain.preemption import committed_line

                log.info(committed_line(step, f"({where})"))
            self._leave_preempted()

    def _write_state(
        self,
        step: int,
        objects: tuple[Any, ...],
        extra: dict[str, Any],
        position: str | None,
        *,
        blocking: bool,
    ) -> PayloadLike:
        """Hook, on the leader: what `checkpoints.save` commits for `step` (files, a writer,
        a `Snapshot`), holding `objects`, `extra` and the merged `position` (JSON, or None).

        Not `blocking`: copy what the training loop goes on changing before returning.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot save a checkpoint")

    def _gather_position(self, step: int, data: Any) -> str | None:
        """Hook: every trainer's position of `data`, merged, as JSON on the leader; a collective.

        The parts meet beside the steps, then at `barrier()` (for a framework whose
        collectives move no objects); a plugin whose can overrides it.
        """
        from vtrain.data.saved_position import gather_through_folder, own_position

        manager = self.checkpoints
        return gather_through_folder(
            manager.location,
            step,
            own_position(data),
            self._place("save_checkpoint(data=)"),
            is_leader=manager.is_leader,
            barrier=self.barrier,
        )

    def resume(self, *objects: Any, **options: Any) -> Resumed:
        """Load the newest committed checkpoint into `objects`, the same step on every trainer;
        what was found (falsy: nothing committed yet). The leader says which in the log.

        `options` are the plugin's own, where its handle's docs name some; a handle that
        takes none raises `UsageError` for any.
        """
        found = self._resume(*objects, **options)
        if found:
            from vtrain.timeline import recorder
            from vtrain.timeline.events import RESUME

            recorder().record(RESUME, step=found.done)
        if self.is_leader:
            log.info(found.describe())
            if found:  # in the loop's own unit, as its run's metrics are (Keras: epochs)
                self.track.resumed(found.done, found.uri)
        return found

    def _resume(self, *objects: Any, **options: Any) -> Resumed:
        """Hook: the newest committed step of `checkpoints`, read by `_read_state`; a plugin
        whose resume reads something else (or takes options) overrides this instead."""
        if options:
            raise UsageError(
                "takes no keywords",
                source="resume",
                value=sorted(options),
                expected=f"the objects to load into, as {type(self).__name__}'s docs say",
            )
        checkpoint = self.checkpoints.restore()
        if checkpoint is None:
            return Resumed()
        # From /gcs or gs:// the step is a temporary local copy: removed once loaded.
        with checkpoint:
            return self._read_state(checkpoint, objects)

    def _read_state(self, checkpoint: Checkpoint, objects: tuple[Any, ...]) -> Resumed:
        """Hook: load a committed step (open for the call) into `objects`; what it held."""
        raise NotImplementedError(f"{type(self).__name__} has no resume")

    # -- progress ---------------------------------------------------------------------------

    def step(self, step: int | None = None, *, total: int | None = None) -> None:
        """A step of the training loop ended (`step`: its number, where the loop counts them;
        `total`: the steps it will train, for a TrainJob's progress and ETA).

        The watchdog and `vtrain local run`'s live view count steps from it; the plugins'
        callbacks (Keras, Lightning, XGBoost), `batches` and `save_checkpoint` mark their
        own, so only a hand-written loop calls it. A few attribute writes: no I/O.
        """
        progress = tracker()
        progress.stepped(step, explicit=True)
        if total is not None:
            progress.total = total

    @contextlib.contextmanager
    def long(self, what: str, seconds: float) -> Iterator[None]:
        """A block that may go `seconds` without a step and is no hang (an evaluation, a
        first compile); `what` is said if it overruns even that."""
        from vtrain.errors import positive_seconds

        given = positive_seconds(seconds, source="long", problem="not a number of seconds")
        if given == float("inf"):  # a bound nobody waits out: say `off` with VTRAIN_WATCHDOG
            raise UsageError("no bound", source="long", value=seconds, expected="finite seconds")
        with tracker().long(what, given):
            yield

    @property
    def progress(self) -> Snapshot:
        """This trainer's progress: its step, step rate, last commit and state."""
        return tracker().snapshot(time.monotonic())

    # -- preemption -------------------------------------------------------------------------

    @property
    def preempted(self) -> bool:
        """True on every trainer once any trainer got SIGTERM (a preemption), and from then on.

        Where the framework must agree on it (a collective), every trainer reads it at the
        same point: `save_checkpoint` does, and the framework's callbacks.
        """
        life = self._life
        if not life.preempted:
            life.preempted = self._agree_preempted(self._sigterm_here())
        return life.preempted

    def _sigterm_here(self) -> bool:
        """Hook: True once this process got SIGTERM (the process's flag, installed on first use)."""
        from vtrain.preemption import requested, watch

        watch()
        return requested()

    def _agree_preempted(self, here: bool) -> bool:
        """Hook: whether any trainer got SIGTERM, given this one's `here`; alone, `here` is."""
        return here

    def _leave_preempted(self) -> NoReturn:
        """Hook: every trainer leaves with status 143 once the last step is committed."""
        from vtrain.preemption import leave

        self.barrier()  # no trainer leaves before the commit: its exit may end the job
        leave()

    def write_model(self, model: Any, folder: str, name: str) -> str:
        """Write `model` into the local `folder` as `name`; return the main file's name."""
        raise NotImplementedError(f"{type(self).__name__} cannot save a model")

    def save_model(self, model: Any, name: str | None = None) -> str | None:
        """Write `model` to AIP_MODEL_DIR from the leader; return its URI there, None elsewhere.

        `name` is the file's (default `model_name`, the framework's). Written to a local
        folder first, then put in place through vtrain's storage, so a gs:// model folder
        works with or without the /gcs/ mount. Where the framework saves collectively,
        every replica must call it.
        """
        if not (self.is_leader or self.saves_collectively):
            return None
        from vtrain.storage.publish import publish_model

        chosen = self.model_name if name is None else name
        track = self.__dict__.get("track")
        with tracker().long("the model's upload", COMMIT_SECONDS):
            return publish_model(
                lambda folder: self.write_model(model, folder, chosen),
                self.context.model_dir,
                upload=self.is_leader,
                environ=self.environ,
                # The run a script tracks keeps the model too, as its artifact.
                also=track.artifact if track is not None and track.attempt else None,
            )

    def report(self, value: float, tag: str | None = None, *, step: int | None = None) -> bool:
        """Report `value`, the tuning metric, from the leader; False, writing nothing, elsewhere.

        `tag` names the metric (default the job's metric tag); `step` is the step it was
        measured at, for the metric file and the tracked run. See `vtrain.hypertune.report`.
        """
        if not self.is_leader:
            return False
        from vtrain import hypertune

        tracker().metrics[tag or self.context.metric_tag] = value  # a TrainJob's status shows it
        track = self.__dict__.get("track")
        if track is not None and (track.attempt or track.auto):  # the script's run gets it too
            track.metrics({tag or self.context.metric_tag: value}, step=step)
        # This handle decided who leads (a process of a per-GPU launch may not).
        return hypertune.report(value, tag, step, environ=self.environ, all_replicas=True)

    @functools.cached_property
    def track(self) -> Track:
        """The job's run (one per trial): `params`, `metrics`, `artifact`, `tags`. The leader
        writes; elsewhere they do nothing. A restarted leader goes on with the same run, as
        its next attempt; nothing is written until something is tracked."""
        from vtrain.storage import open_location
        from vtrain.track import Track
        from vtrain.track.backends import backends
        from vtrain.track.identity import RUN_VARIABLE, run_folder, run_name
        from vtrain.track.sinks import made

        context, environ = self.context, self.environ
        # A run alone has no job id: its folder's name (vtrain-output/runs/<time>-<pid>) is its.
        parent = context.model_dir.rstrip("/").rpartition("/")[0]
        fallback = parent.rpartition("/")[2] or "run"
        # `vtrain tune` names its trials' runs: a trial's job id is new at each run of a study.
        named = environ.get(RUN_VARIABLE)
        run = (
            run_name(named, None, fallback)
            if named
            else run_name(context.job_id, context.trial_id, fallback)
        )
        folder = run_folder(context.model_dir, run) if self.is_leader else ""
        on = backends(environ) if self.is_leader else ()
        return Track(
            leader=self.is_leader,
            run=run,
            folder=lambda: open_location(folder, environ=environ),
            backends=made(
                on, run, lambda: open_location(context.tensorboard_dir, environ=environ), environ
            ),
        )

    # -- together, and the end --------------------------------------------------------------

    def barrier(self) -> None:
        """Wait until every trainer reaches this point (nothing to wait for alone)."""
        if self.world_size > 1:
            raise NotImplementedError(f"{type(self).__name__} has no barrier")

    def close(self, ok: bool = True) -> None:
        """Wait for the last checkpoint to commit (raising its failure), then release what
        `configure()` set up; safe to call twice. With `ok` False (leaving on an error) the
        save is not waited for here, nor any peer."""
        life = self._life
        if life.closed:
            return
        life.closed = True
        from vtrain.preemption import unwatch
        from vtrain.progress.watchdog import unwatch as done

        unwatch()  # no save is coming: SIGTERM stops the process at once again
        done()  # what follows (the last commit, leaving the collective) is no step
        from vtrain.trainjob.status_reporter import stop_reporting

        stop_reporting(done=ok)
        try:
            track = self.__dict__.get("track")
            if track is not None:
                track.close(ok=ok)
            manager = self._made_checkpoints()
            if ok and manager is not None:
                manager.close()
        finally:
            self._release(ok)

    def _release(self, ok: bool) -> None:
        """Hook: leave the framework's collective; `ok` False: without waiting for peers."""

    def __enter__(self: H) -> H:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close(ok=kind is None)


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"

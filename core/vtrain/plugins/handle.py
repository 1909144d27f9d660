"""`Handle`: what every plugin's `configure()` returns, in one vocabulary across frameworks.

Each framework's handle speaks these words with the same meaning and return
shape, so a user who has read one knows the other three:

- `rank`, `world_size`: this trainer's place among the trainers of the
  collective (None and 0 on a replica that does not train; 0 of 1 alone);
- `is_leader`, `role`: whether this replica writes shared artifacts, and its role;
- `checkpoints`: the job's leader-aware `CheckpointManager`;
- `resume(...)`: load the newest committed checkpoint, return a `Resumed`;
- `save_model(model)`: write the model to AIP_MODEL_DIR from the leader;
- `report(value, tag=...)`: the tuning metric, from the leader;
- `share(split)`, `shard(items)`: this trainer's part of the input;
- `stream(split, resume=found)`: its records with a position, going on where a commit stood;
- `barrier()`, `close()`.

Framework-native objects keep their native names on each handle (`strategy`,
`kvstore`, `trainer()`, `callbacks()`). A handle keeps the environment it was
configured with: nothing it does reads `os.environ` again.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from vtrain.cluster import ClusterInfo
from vtrain.errors import UsageError

# Checkpoints, data and the run context load when first used: a serving replica never does.
if TYPE_CHECKING:
    from vtrain.checkpoints import CheckpointManager
    from vtrain.context import RunContext
    from vtrain.data import Share, Stream

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


@dataclass(frozen=True)
class Handle:
    """This replica's place in the job, and the helpers every framework shares."""

    info: ClusterInfo
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
        the validation split whole, nothing else.
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
        """This trainer's share of a list (of files, say): every world_size-th, from `rank`."""
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
        (`shuffle_seed`, `buffer`, `format` … as when it was saved). Each plugin feeds it
        to its framework: PyTorch's StreamDataset, Keras' `stream_batches`, MXNet's
        `stream_iter`.
        """
        import sys

        from vtrain.data import stream
        from vtrain.data.saved_position import describe_resume

        position = resume.data if isinstance(resume, Resumed) else resume
        rank, world_size = (None, None) if self.rank is None else self._place("stream")
        made = stream(split, rank=rank, world_size=world_size, resume=position,
                      environ=self.environ, **options)  # fmt: skip
        if self.is_leader and isinstance(resume, Resumed) and resume:
            line = describe_resume(self._step_of(resume), position, made.world_size)
            print(line, file=sys.stderr, flush=True)
        return made

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
        """`checkpoints`, or the manager of another folder (a `trial-<id>` subfolder under tuning).

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

    if TYPE_CHECKING:
        # Each plugin's resume takes what its framework restores into (a model, an optimizer,
        # a trainer); to the type checker, any signature that returns a Resumed.
        resume: ClassVar[Callable[..., Resumed]]
    else:

        def resume(self, *objects: Any, **options: Any) -> Resumed:
            """Load the newest committed checkpoint into `objects`; what was found (falsy: none)."""
            raise NotImplementedError(f"{type(self).__name__} has no resume")

    def write_model(self, model: Any, folder: str, name: str) -> str:
        """Write `model` into the local `folder` as `name`; return the main file's name."""
        raise NotImplementedError(f"{type(self).__name__} cannot save a model")

    def save_model(self, model: Any, name: str | None = None) -> str | None:
        """Write `model` to AIP_MODEL_DIR from the leader; return its URI there, None elsewhere.

        Written to a local folder first, then put in place through vtrain's
        storage, so a gs:// model folder works with or without the /gcs/ mount.
        Where the framework saves collectively, every replica must call it.
        """
        if not (self.is_leader or self.saves_collectively):
            return None
        from vtrain.storage.publish import publish_model

        chosen = self.model_name if name is None else name
        return publish_model(
            lambda folder: self.write_model(model, folder, chosen),
            self.context.model_dir,
            upload=self.is_leader,
            environ=self.environ,
        )

    def report(self, value: float, tag: str | None = None, *, step: int | None = None) -> bool:
        """Report the tuning metric from the leader; False, writing nothing, elsewhere."""
        if not self.is_leader:
            return False
        from vtrain import hypertune

        # This handle decided who leads (a process of a per-GPU launch may not).
        return hypertune.report(value, tag, step, environ=self.environ, all_replicas=True)

    # -- together, and the end --------------------------------------------------------------

    def barrier(self) -> None:
        """Wait until every trainer reaches this point (nothing to wait for alone)."""
        if self.world_size > 1:
            raise NotImplementedError(f"{type(self).__name__} has no barrier")

    def close(self) -> None:
        """Release what `configure()` set up; safe to call twice. Nothing to release here."""

    def __enter__(self: H) -> H:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"

"""What `configure()` returns: this trainer's place in the collective, and the helpers it needs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from vtrain import UsageError
from vtrain.plugins.handle import Handle, Resumed
from vtrain_xgboost.communicator import Link
from vtrain_xgboost.rendezvous import Rendezvous
from vtrain_xgboost.rows import row_block

if TYPE_CHECKING:
    from vtrain.checkpoints import Checkpoint
    from vtrain.data import Stream

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Rows(Protocol[T_co]):
    """What has rows to split: an array, a list, a DataFrame (`len` and slices)."""

    def __len__(self) -> int: ...
    def __getitem__(self, rows: slice, /) -> T_co: ...


MODEL_NAME = "model.bst"
"""The file Vertex's pre-built XGBoost prediction container loads from the model folder."""


def _count(value: object, argument: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(
            "not a positive count",
            source=f"callbacks({argument}=)",
            value=value,
            expected="an int >= 1",
        )
    return value


@dataclass(frozen=True)
class XGBoostHandle(Handle):
    """Rank, world size and leadership; data shares, callbacks, resume and the model's saving.

    Use it as `with handle:` around training: leaving it leaves the collective,
    and on the chief waits for every worker to finish before stopping the tracker
    (after an error, it stops the tracker at once). A checkpoint is a booster:
    `save_checkpoint(rounds, booster)`, `resume()` (its `state`).
    `rendezvous` is None on a replica outside the collective (ps, evaluator).
    """

    rendezvous: Rendezvous | None
    link: Link | None
    """The live membership in the collective; None alone or off the collective."""

    model_name: ClassVar[str] = MODEL_NAME

    @property
    def rank(self) -> int | None:
        """Rank in the collective (the tracker's, which is vtrain's); None off the collective."""
        return None if self.rendezvous is None else self.rendezvous.rank

    @property
    def world_size(self) -> int:
        """Number of trainers (0 off the collective)."""
        return 0 if self.rendezvous is None else self.rendezvous.world_size

    # -- data ---------------------------------------------------------------------------
    # `shard(items)` (every world_size-th item from rank) and `share(split)` are the core's.

    def rows(self, total: int) -> slice:
        """This trainer's contiguous block of `total` rows: ``data[handle.rows(len(data))]``."""
        rank, world = self._place("rows")
        return row_block(total, rank, world)

    def row_block(self, data: Rows[T]) -> T:
        """This trainer's contiguous block of `data`'s rows (an array, a list, a DataFrame)."""
        return data[self.rows(len(data))]

    def dmatrix(
        self,
        split: str = "training",
        *,
        by_record: bool = False,
        uri: str | None = None,
        **options: Any,
    ) -> Any:
        """A QuantileDMatrix of this trainer's `share(split)` (JSON Lines or CSV columns),
        `by_record` and `uri` as for `share`.

        `options` are `vtrain_xgboost.data.share_dmatrix`'s, declared there once:
        `label=` (required), `features=`, `ref=`, `memory_budget=`, `batch_rows=`,
        `cache_dir=`…, and XGBoost's own matrix options. Every trainer must make
        the same calls in the same order: the sketch is built together.
        """
        self._place("dmatrix")
        from vtrain_xgboost.data import share_dmatrix

        share = self.share(split, by_record=by_record, uri=uri)
        return share_dmatrix(share, distributed=self._joined, environ=self.environ, **options)

    def _batches(
        self,
        stream: Stream,
        *,
        batch_size: int,
        label: str,
        features: Any = None,
    ) -> Any:
        """An `xgboost.DataIter` of the stream's current epoch, `batch_size` rows a batch, for
        `xgb.QuantileDMatrix(it)` or `xgb.DMatrix(it)`.

        `label` names the target column, `features` the others (default: the first
        record's, rank 0's on every trainer). The first pass reads the epoch from the
        stream; XGBoost's later passes read the batches it kept. Every trainer makes the
        matrix together, as for `dmatrix`.
        """
        self._place("batches")
        from vtrain_xgboost.batches import StreamBatches

        return StreamBatches(
            stream, batch_size, label=label, features=features, distributed=self._joined
        )

    @property
    def _joined(self) -> bool:
        """True while this process is in a collective of more than one trainer."""
        return self.link is not None and self.link.joined

    # -- training -----------------------------------------------------------------------

    def callbacks(
        self,
        *,
        checkpoint_every: int | None = 10,
        keep: int | None = None,
        keep_every: int | None = None,
        metric: str | None = None,
        report_every: int = 1,
        tag: str | None = None,
    ) -> list[Any]:
        """XGBoost callbacks: mark each round; commit the booster every N rounds; report `metric`
        every N rounds.

        The first marks each round as a step, for the watchdog and `vtrain local run`'s
        live view: training without it makes no progress they can see.

        The booster goes to `checkpoints` every `checkpoint_every` rounds (None: never;
        retention `keep`, `keep_every`). `metric`, named as XGBoost prints it
        (``"validation-rmse"``), goes to `report` every `report_every` rounds under `tag`
        (default: CLOUD_ML_HP_METRIC_TAG). Pass the list to
        `xgb.train(callbacks=…)` or an estimator's `callbacks=`.
        """
        from vtrain_xgboost.callbacks import CheckpointCallback, ProgressCallback, ReportCallback

        found: list[Any] = [ProgressCallback(self.track)]
        if checkpoint_every is not None:
            every = _count(checkpoint_every, "checkpoint_every")
            self.checkpoint_manager(keep=keep, keep_every=keep_every)  # the handle's, retained
            found.append(CheckpointCallback(self, every))
        if metric is not None:
            if not isinstance(metric, str) or not metric:
                raise UsageError(
                    "not a metric name",
                    source="callbacks(metric=)",
                    value=metric,
                    expected='"<eval name>-<metric>", e.g. "validation-rmse"',
                )
            every = _count(report_every, "report_every")
            found.append(ReportCallback(metric, every, tag, self))
        return found

    # -- checkpoints: `save_checkpoint(rounds, booster, **extra)` and `resume()` are the core's

    def _write_state(
        self,
        step: int,
        objects: tuple[Any, ...],
        extra: dict[str, Any],
        position: str | None,
        *,
        blocking: bool,
    ) -> dict[str, bytes]:
        """The booster's bytes (taken now: it changes in the next round), the trainer count
        (the only data position boosting has) and `extra`."""
        from vtrain_xgboost.state import state_files

        if len(objects) != 1:
            raise UsageError(
                f"takes one booster, got {len(objects)} objects",
                source="save_checkpoint",
                value=len(objects),
                expected="save_checkpoint(rounds, booster) (a Booster or an XGBModel)",
            )
        return state_files(objects[0], max(1, self.world_size), extra, position)

    def _read_state(self, checkpoint: Checkpoint, objects: tuple[Any, ...]) -> Resumed:
        """The newest committed booster (`state`) and its rounds (`done`), the same on every rank.

        Continue with ``xgb.train(..., num_boost_round=total - resumed.done,
        xgb_model=resumed.state)``; a fresh start gives ``done`` 0 and ``state`` None.
        `data` is None unless saved with `data=`: every round reads the whole share, so
        there is no position in the data to go on from. With another number of trainers
        than the commit was made by (``extra["world_size"]``), `dmatrix` and `share`
        deal the whole split among the trainers there are.
        """
        from vtrain_xgboost.state import read_state

        if objects:
            raise UsageError(
                "takes nothing: the booster comes back as `state`",
                source="resume",
                value=len(objects),
                expected="handle.resume()",
            )
        return read_state(checkpoint)

    def _agree_preempted(self, here: bool) -> bool:
        """Whether any trainer got SIGTERM: an allreduce of one number, on every trainer."""
        if not self._joined:
            return here
        import numpy as np
        from xgboost import collective

        flags = collective.allreduce(np.array([int(here)], np.int32), collective.Op.MAX)
        return bool(flags[0])

    def write_model(self, model: Any, folder: str, name: str) -> str:
        """The booster (or an estimator's) as UBJSON, which `xgb.Booster(model_file=)` detects."""
        from vtrain_xgboost.state import booster_bytes

        with open(os.path.join(folder, name), "wb") as f:
            f.write(booster_bytes(model))
        return name

    # -- together, and the end ----------------------------------------------------------

    def barrier(self) -> None:
        """Wait until every trainer reaches this point (an allreduce of one number)."""
        if self._joined:
            import numpy as np
            from xgboost import collective

            collective.allreduce(np.zeros(1, np.int32), collective.Op.SUM)

    def _release(self, ok: bool) -> None:
        """Leave the collective; on the chief, wait for the workers, then stop the tracker.

        After an error the others may never sign off: the tracker stops without waiting.
        """
        if self.link is not None:
            self.link.close(failed=not ok)

"""What `configure()` returns: this trainer's place in the collective, and the helpers it needs."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

from vtrain import RunContext, UsageError
from vtrain.plugins.base import Handle
from vtrain_xgboost.communicator import Link
from vtrain_xgboost.data import DEFAULT_BATCH_ROWS
from vtrain_xgboost.rendezvous import Rendezvous
from vtrain_xgboost.shards import file_share, row_block
from vtrain_xgboost.state import booster_of, restore_booster

T = TypeVar("T")
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
    """Rank, world size and leadership; data shards, callbacks, resume and the model's saving.

    Use it as `with handle:` around training: leaving it leaves the collective,
    and on the chief waits for every worker to finish before stopping the tracker.
    `rendezvous` is None on a replica outside the collective (ps, evaluator).
    """

    rendezvous: Rendezvous | None
    context: RunContext
    link: Link | None
    """The live membership in the collective; None alone or off the collective."""

    @property
    def in_collective(self) -> bool:
        """True on the chief and the workers; ps, evaluators and reducers take no rank."""
        return self.rendezvous is not None

    @property
    def rank(self) -> int | None:
        """Rank in the collective (the tracker's, which is vtrain's); None off the collective."""
        return None if self.rendezvous is None else self.rendezvous.rank

    @property
    def world_size(self) -> int:
        """Number of trainers (0 off the collective)."""
        return 0 if self.rendezvous is None else self.rendezvous.world_size

    @property
    def distributed(self) -> bool:
        """True when this process is in a collective of more than one trainer."""
        return self.link is not None and self.link.joined

    # -- data ---------------------------------------------------------------------------

    def rows(self, total: int) -> slice:
        """This trainer's block of `total` rows: ``data[handle.rows(len(data))]``."""
        rank, world = self._place("rows")
        return row_block(total, rank, world)

    def shard(self, data: T) -> T:
        """This trainer's rows of `data` (an array, a DataFrame's ``.iloc``, a list)."""
        return data[self.rows(len(data))]  # type: ignore[index, arg-type]

    def files(self, files: Sequence[T]) -> list[T]:
        """This trainer's share of a list of files: every world_size-th, from its rank."""
        rank, world = self._place("files")
        return file_share(files, rank, world)

    def dmatrix(
        self,
        split: str = "training",
        *,
        label: str,
        features: Sequence[str] | None = None,
        format: str | None = None,
        quantile: bool = True,
        ref: Any = None,
        memory_budget: int | None = None,
        batch_rows: int = DEFAULT_BATCH_ROWS,
        by_record: bool = False,
        uri: str | None = None,
        cache_dir: str | None = None,
        **dmatrix_options: Any,
    ) -> Any:
        """A QuantileDMatrix of this trainer's share of `split` (JSON Lines or CSV columns).

        The files come from the split's AIP_*_DATA_URI (or `uri`), dealt by rank;
        `label` names the target column, `features` the others (default: the
        first record's). Missing values read as NaN. Past `memory_budget` bytes of
        files (default: a quarter of the memory) the matrix is built through
        XGBoost's external memory, `batch_rows` records at a time, cached under
        `cache_dir`. Pass the training matrix as `ref=` for a validation split.
        `quantile=False` gives a plain DMatrix. Every trainer must make the same
        calls in the same order: the sketch is built together.
        """
        rank, world = self._place("dmatrix")
        from vtrain.data import files
        from vtrain_xgboost.data import share_dmatrix

        share = files(split, rank=rank, world_size=world, by_record=by_record, uri=uri)
        return share_dmatrix(
            share,
            label=label,
            features=features,
            format=format,
            quantile=quantile,
            ref=ref,
            memory_budget=memory_budget,
            batch_rows=batch_rows,
            cache_dir=cache_dir,
            distributed=self.distributed,
            **dmatrix_options,
        )

    # -- training -----------------------------------------------------------------------

    def checkpoints(self, **manager_options: Any) -> Any:
        """The CheckpointManager the callbacks commit to and `resume` reads (checkpoint dir)."""
        from vtrain.checkpoints import CheckpointManager

        return CheckpointManager(is_leader=self.is_leader, **manager_options)

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
        """XGBoost callbacks: commit the booster every N rounds; report `metric` every N rounds.

        `metric` is named as XGBoost prints it (``"validation-rmse"``); the value
        goes to the tuning service under `tag` (default: CLOUD_ML_HP_METRIC_TAG).
        Pass the list to `xgb.train(callbacks=…)` or an estimator's `callbacks=`.
        """
        from vtrain_xgboost.callbacks import CheckpointCallback, ReportCallback
        from vtrain_xgboost.writer import Writer

        writer = Writer()  # one per list: a checkpoint and a report are written in order
        found: list[Any] = []
        if checkpoint_every is not None:
            every = _count(checkpoint_every, "checkpoint_every")
            manager = self.checkpoints(keep=keep, keep_every=keep_every)
            found.append(CheckpointCallback(manager, every, writer))
        if metric is not None:
            if not isinstance(metric, str) or not metric:
                raise UsageError(
                    "not a metric name",
                    source="callbacks(metric=)",
                    value=metric,
                    expected='"<eval name>-<metric>", e.g. "validation-rmse"',
                )
            every = _count(report_every, "report_every")
            found.append(ReportCallback(metric, every, tag, self.is_leader, writer))
        return found

    def resume(self) -> tuple[Any, int]:
        """(the newest committed booster or None, rounds already done), the same on every rank.

        Continue with ``xgb.train(..., num_boost_round=total - done, xgb_model=booster)``.
        """
        return restore_booster(self.checkpoints())

    def save_model(self, model: Any, name: str = MODEL_NAME) -> str | None:
        """Write the booster (or an estimator's) to AIP_MODEL_DIR from the leader; return where.

        Written to a local file first, then put in place through vtrain's storage,
        so a gs:// model folder works with or without the /gcs/ mount. The bytes
        are UBJSON, which `xgb.Booster(model_file=...)` detects whatever the name.
        """
        if not self.is_leader:
            return None
        from vtrain.storage import open_location

        booster = booster_of(model)
        target = open_location(self.context.model_dir)
        target.makedirs()
        with tempfile.TemporaryDirectory(prefix="vtrain-model-") as scratch:
            local = f"{scratch}/{name}"
            with open(local, "wb") as f:
                f.write(booster.save_raw(raw_format="ubj"))
            target.upload(local, name)
        return target.join(name).uri

    # -- the end ------------------------------------------------------------------------

    def close(self) -> None:
        """Leave the collective; on the chief, wait for the workers, then stop the tracker."""
        if self.link is not None:
            self.link.close()

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        # After an error the others may never sign off: stop the tracker without waiting.
        if self.link is not None:
            self.link.close(failed=e is not None)

    def _place(self, what: str) -> tuple[int, int]:
        if self.rendezvous is None:
            raise UsageError(
                f"a {self.role} replica has no share of the data",
                source=what,
                value=self.role,
                expected="a chief or worker replica (check handle.in_collective first)",
            )
        return self.rendezvous.rank, self.rendezvous.world_size

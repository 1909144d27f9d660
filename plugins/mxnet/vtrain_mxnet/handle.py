"""What `configure()` returns: the kvstore, this worker's rank and shard, and training helpers."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vtrain import UsageError
from vtrain.plugins.base import Handle
from vtrain_mxnet.children import Children
from vtrain_mxnet.layout import Layout

# Checkpoints, data and the Trainer load when first used: every replica imports this module
# before its first step, and most of it is not needed there.
if TYPE_CHECKING:
    from vtrain.checkpoints import CheckpointManager
    from vtrain.data import Share


@dataclass
class _Resources:
    """What close() releases, once: the kvstore (ps-lite's node) and the child processes."""

    kvstore: Any = None
    children: Children | None = None
    manager: CheckpointManager | None = None
    closed: bool = False


@dataclass(frozen=True)
class MXNetHandle(Handle):
    """The kvstore, MXNet's rank and worker count, and helpers; `kvstore` is None off it.

    `rank` is the rank MXNet's scheduler gave this worker (not the cluster's
    list order); None on a replica that does not train. Alone, rank is 0 of 1
    and there is no kvstore.
    """

    layout: Layout
    kvstore_type: str | None
    """dist_sync, dist_async or dist_device_sync; None when there is no kvstore."""
    worker_rank: int | None
    num_workers: int
    _resources: _Resources = field(default_factory=_Resources, repr=False, compare=False)

    @property
    def kvstore(self) -> Any:
        """The mx.kv.KVStore this worker trains with; None alone, off the kvstore, or closed."""
        return self._resources.kvstore

    @property
    def rank(self) -> int | None:
        """This worker's rank as MXNet numbers it; None on a replica that does not train."""
        return self.worker_rank

    @property
    def part_index(self) -> int:
        """This worker's part of the data, for mx.io iterators (`part_index=`)."""
        return self.worker_rank or 0

    @property
    def num_parts(self) -> int:
        """How many parts the data is cut into, for mx.io iterators (`num_parts=`)."""
        return max(1, self.num_workers)

    @property
    def children(self) -> dict[str, int]:
        """The MXNet scheduler and server processes this replica runs beside it: role -> pid."""
        children = self._resources.children
        return {} if children is None else children.pids

    def shard(self, items: list[Any] | tuple[Any, ...]) -> list[Any]:
        """This worker's share of a list (of files, say): every num_parts-th, from part_index."""
        return list(items)[self.part_index :: self.num_parts]

    def trainer(
        self, params: Any, optimizer: Any = "sgd", optimizer_params: Any = None, **options: Any
    ) -> Any:
        """A gluon.Trainer bound to this worker's kvstore.

        Under dist_sync the kvstore sums the gradients and each worker runs the
        optimizer itself, so its states can be checkpointed: call
        `trainer.step(global_batch_size)` with the batch of all workers together.
        """
        from vtrain_mxnet.ordered_trainer import OrderedTrainer

        if "kvstore" in options:
            raise UsageError(
                "the handle's trainer uses the handle's kvstore",
                source="MXNetHandle.trainer",
                path="kvstore",
                value=options["kvstore"],
                hint="choose it with configure(kvstore=...)",
            )
        kvstore = self.kvstore
        if kvstore is not None and self.kvstore_type != "dist_async":
            options.setdefault("update_on_kvstore", False)
        return OrderedTrainer(params, optimizer, optimizer_params, kvstore=kvstore, **options)

    def share(
        self, split: str = "training", *, by_record: bool = False, uri: str | None = None
    ) -> Share:
        """This worker's share of `split` (see vtrain.data.files), dealt by MXNet's rank.

        Part `part_index` of `num_parts`: the kvstore's numbering, not the
        cluster's list order. Off the kvstore (an evaluator) vtrain.data's
        placement decides: the validation split whole, nothing else.
        """
        from vtrain.data import files

        if self.worker_rank is None:
            return files(split, by_record=by_record, uri=uri)
        return files(
            split, rank=self.part_index, world_size=self.num_parts, by_record=by_record, uri=uri
        )

    def data_iter(
        self,
        split: str = "training",
        *,
        data: Sequence[str],
        label: str | None,
        batch_size: int,
        last_batch: str = "pad",
        format: str | None = None,
        by_record: bool = False,
        uri: str | None = None,
    ) -> Any:
        """An mx.io.DataIter of batches from this worker's share of a JSON Lines or CSV split.

        `data` names the feature columns, `label` the label column (None: no label);
        `batch_size` is this worker's batch. See vtrain_mxnet.data.RecordIter.
        Under dist_sync every worker must take as many steps as the others: with
        shares of unequal size, stop each epoch at a step count all of them reach.
        """
        from vtrain.data import check_format, read_share
        from vtrain_mxnet.data import RecordIter, check_batching, check_columns

        check_columns(data, label)
        check_batching(batch_size, last_batch)
        if format is not None:
            check_format(format)
        share = self.share(split, by_record=by_record, uri=uri)
        return RecordIter(
            lambda: read_share(share, format=format),
            data=data,
            label=label,
            batch_size=batch_size,
            last_batch=last_batch,
        )

    @property
    def checkpoints(self) -> CheckpointManager:
        """The run's CheckpointManager; the leader writes the shared folder."""
        resources = self._resources
        if resources.manager is None:
            from vtrain.checkpoints import CheckpointManager

            resources.manager = CheckpointManager(is_leader=self.is_leader)
        return resources.manager

    def save_checkpoint(
        self, epoch: int, net: Any, trainer: Any = None, *, blocking: bool = False
    ) -> str | None:
        """Commit the net's parameters and the trainer's states as `epoch` (epochs done).

        Only the leader writes; it returns the step folder there, None elsewhere.
        The arrays are written out before it returns; the sync (or upload) and
        the commit run in the background unless `blocking`, and the next save,
        `close()` and the end of the script wait for them.
        """
        from vtrain_mxnet.state import GluonState

        return GluonState(self.checkpoints).save(epoch, net, trainer, blocking=blocking)

    def resume(self, net: Any, trainer: Any = None) -> int:
        """Load the newest committed checkpoint into net and trainer; return the epoch to start."""
        from vtrain_mxnet.state import GluonState

        return GluonState(self.checkpoints).restore(net, trainer)

    def save_model(self, net: Any, name: str = "model") -> str | None:
        """Write the network to AIP_MODEL_DIR from the leader; return where, else None.

        `<name>.params` always; `<name>-symbol.json` and `<name>-0000.params` too for a
        hybridized network that has run (what MXNet's serving tools load).
        """
        if not self.is_leader:
            return None
        import tempfile

        from vtrain import RunContext
        from vtrain.storage import open_location

        target = open_location(RunContext.from_env().model_dir)
        target.makedirs()
        with tempfile.TemporaryDirectory(prefix="vtrain-model-") as scratch:
            net.save_parameters(os.path.join(scratch, f"{name}.params"))
            if getattr(net, "_cached_graph", ()):
                net.export(os.path.join(scratch, name))
            for file in sorted(os.listdir(scratch)):
                target.upload(os.path.join(scratch, file), file)
        return target.join(f"{name}.params").uri

    def report(self, value: float, epoch: int | None = None, *, tag: str | None = None) -> bool:
        """Report the tuning metric for `epoch` from the leader; False where nothing was written."""
        from vtrain import hypertune

        return hypertune.report(value, step=epoch, tag=tag)

    def barrier(self) -> None:
        """Wait for every worker (a no-op without a kvstore)."""
        if self.kvstore is not None:
            self.kvstore._barrier()

    def close(self, ok: bool = True) -> None:
        """Leave MXNet's job, then let the scheduler and server children end; safe twice.

        With `ok` False (an error on the way out) this worker leaves without the
        barrier at exit, which would wait for the other workers forever.
        """
        resources = self._resources
        if resources.closed:
            return
        resources.closed = True
        if ok and resources.manager is not None:
            resources.manager.wait()  # the last checkpoint is committed before the job can end
        kvstore, resources.kvstore = resources.kvstore, None
        if kvstore is not None:
            _leave(kvstore, barrier=ok)
        if resources.children is not None:
            resources.children.stop()

    def __exit__(self, kind: Any, e: Any, tb: Any) -> None:
        self.close(ok=kind is None)


def _leave(kvstore: Any, *, barrier: bool) -> None:
    """Free the kvstore now: ps-lite's finalize runs here, not at some later garbage collection."""
    import mxnet as mx
    from mxnet.base import _LIB, check_call

    if barrier:
        mx.nd.waitall()
    else:
        kvstore._set_barrier_before_exit(False)
    check_call(_LIB.MXKVStoreFree(kvstore.handle))
    # Trainers still hold this object: its __del__ then frees NULL, which C++ allows.
    kvstore.handle = ctypes.c_void_p(None)

"""What `configure()` returns: the kvstore, this worker's rank among MXNet's workers, helpers."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from vtrain import UsageError
from vtrain.plugins.handle import Handle, Resumed
from vtrain_mxnet import internals
from vtrain_mxnet.children import Children
from vtrain_mxnet.layout import Layout

if TYPE_CHECKING:
    from vtrain.checkpoints import Checkpoint
    from vtrain_mxnet.preemption import AgreedSigterm


@dataclass
class _Resources:
    """What close() releases: the kvstore (ps-lite's node), the child processes, SIGTERM."""

    kvstore: Any = None
    children: Children | None = None
    sigterm: AgreedSigterm | None = None


@dataclass(frozen=True)
class MXNetHandle(Handle):
    """The kvstore, and this worker's place among MXNet's workers; `kvstore` is None off it.

    `rank` is the rank MXNet's scheduler gave this worker (not the cluster's
    list order) and `world_size` the kvstore's number of workers: pass them as
    `part_index=` and `num_parts=` to MXNet's own iterators. None and 0 on a
    replica that does not train; alone, rank 0 of 1 and no kvstore.
    """

    layout: Layout
    """This replica's part in MXNet's parameter-server job, read from the cluster."""
    kvstore_type: str | None
    """dist_sync, dist_async or dist_device_sync; None when there is no kvstore."""
    _rank: int | None
    """What `rank` says: read from the kvstore once it exists."""
    _world_size: int
    """What `world_size` says: read from the kvstore once it exists."""
    _resources: _Resources = field(default_factory=_Resources, repr=False, compare=False)

    @property
    def rank(self) -> int | None:
        """This worker's rank as MXNet's scheduler numbered it; None if it does not train."""
        return self._rank

    @property
    def world_size(self) -> int:
        """The kvstore's number of workers: 1 alone, 0 on a replica that does not train."""
        return self._world_size

    @property
    def kvstore(self) -> Any:
        """The mx.kv.KVStore this worker trains with; None alone, off the kvstore, or closed."""
        return self._resources.kvstore

    @property
    def children(self) -> dict[str, int]:
        """The MXNet scheduler and server processes this replica runs beside it: role -> pid."""
        children = self._resources.children
        return {} if children is None else children.pids

    def trainer(
        self, params: Any, optimizer: Any = "sgd", optimizer_params: Any = None, **options: Any
    ) -> Any:
        """A gluon.Trainer of `params` bound to this worker's kvstore.

        `optimizer`, `optimizer_params` and `options` are gluon.Trainer's, but for
        `kvstore`, which is the handle's (passing one raises `UsageError`; choose it with
        `configure(kvstore=...)`).

        Under dist_sync the kvstore sums the gradients and each worker runs the
        optimizer itself, so its states can be checkpointed: call
        `trainer.step(global_batch_size)` with the batch of all workers together.

        From here SIGTERM (a preemption) only sets a flag, and every so many `step()`s
        (about a quarter second) the workers agree whether one of them got it: see
        `preempted` (not under dist_async, nor with a SIGTERM handler of the script's own).
        """
        from vtrain_mxnet.ordered_trainer import OrderedTrainer
        from vtrain_mxnet.preemption import AgreedSigterm

        if "kvstore" in options:
            raise UsageError(
                "the handle's trainer uses the handle's kvstore",
                source="MXNetHandle.trainer",
                path="kvstore",
                value=options["kvstore"],
                hint="choose it with configure(kvstore=...)",
            )
        kvstore = self.kvstore
        resources = self._resources
        if self.kvstore_type != "dist_async" and resources.sigterm is None:
            resources.sigterm = AgreedSigterm(kvstore, self.world_size)
        if kvstore is not None and self.kvstore_type != "dist_async":
            options.setdefault("update_on_kvstore", False)
        return OrderedTrainer(
            params,
            optimizer,
            optimizer_params,
            kvstore=kvstore,
            sigterm=resources.sigterm,
            **options,
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
        `batch_size` is this worker's batch, and `last_batch` says what a short last one
        becomes: "pad" (filled, its `pad` set) or "discard". `format`, `by_record` and
        `uri` are `share`'s and `vtrain.data.read_share`'s; a bad argument raises
        `UsageError`. See vtrain_mxnet.data.RecordIter.
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

    def _batches(
        self,
        stream: Any,
        *,
        batch_size: int,
        data: Sequence[str],
        label: str | None,
        last_batch: str = "pad",
    ) -> Any:
        """An mx.io.DataIter of `stream`'s batches; its `reset()` starts the stream's next epoch.

        `data` names the feature columns, `label` the label column (None: no label).

        Each batch takes exactly `batch_size` records from the stream, so a save
        after a batch's step holds the position after that batch. A `reset()`
        before the epoch's first batch keeps the place: a loop may reset at each
        epoch's start or at its end.

        Under dist_sync with more than one worker every worker takes the same number of
        steps an epoch: before each batch the workers sum a flag through the kvstore
        (one float), and a worker whose share ran out first gets batches of padding
        alone (`batch.pad == batch_size`) until every share is read. Compute the loss
        on the real rows only (the first `batch_size - batch.pad`; none: a zero loss)
        and call `trainer.step` for every batch, since the others wait for its push.

        Each batch taken marks a step, for the watchdog and the live view, unless the loop
        calls `step()` itself.
        """
        from functools import partial

        from vtrain_mxnet.data import (
            RecordIter,
            check_batching,
            check_columns,
            epochs_of,
            workers_with_records,
        )

        check_columns(data, label)
        check_batching(batch_size, last_batch)
        kvstore, world_size = self.kvstore, self.world_size
        workers_left = None
        if kvstore is not None and self.kvstore_type != "dist_async" and world_size > 1:
            # Not dist_async: its servers run the optimizer, which would change the summed
            # flags, and no push waits for the other workers (a save with data= still does).
            workers_left = partial(workers_with_records, kvstore, world_size=world_size)
        return RecordIter(
            epochs_of(stream),
            data=data,
            label=label,
            batch_size=batch_size,
            last_batch=last_batch,
            workers_left=workers_left,
            steps=True,
        )

    # -- the core's hooks: checkpoints, preemption, the end ---------------------------------

    def _write_state(
        self,
        step: int,
        objects: tuple[Any, ...],
        extra: dict[str, Any],
        position: str | None,
        *,
        blocking: bool,
    ) -> Callable[[str], None]:
        """The net's parameters and the trainer's states (objects: net, trainer), and `extra`.

        `step` counts in the loop's unit and only grows: epochs done, or steps done to
        commit mid-epoch (a preemption does). The arrays are written out in the commit's
        first part, before `save_checkpoint` returns (MXNet's save waits for every pending
        write to them); the sync (or upload) and the commit run in the background.
        """
        from vtrain_mxnet.state import writer

        net, trainer = _net_and_trainer(objects, "save_checkpoint")
        return writer(step, net, trainer, extra, position)

    def _resume(self, *objects: Any, **options: Any) -> Resumed:
        """`resume(net, trainer)`, or `resume(net, trainer=trainer)` as MXNet's handle always
        took it; any other keyword is refused by the core's."""
        if "trainer" in options:
            objects = (*objects, options.pop("trainer"))
        return super()._resume(*objects, **options)

    def _read_state(self, checkpoint: Checkpoint, objects: tuple[Any, ...]) -> Resumed:
        """Load a committed step into the net and trainer; `done`: the step it was saved as."""
        from vtrain_mxnet.state import read

        net, trainer = _net_and_trainer(objects, "resume")
        return read(checkpoint, net, trainer)

    def _sigterm_here(self) -> bool:
        sigterm = self._resources.sigterm
        return sigterm is not None and sigterm.requested

    def _agree_preempted(self, here: bool) -> bool:
        # The trainer agrees after every so many steps (see `trainer`): every worker then
        # sees the same answer after the same step, whatever this one's flag says now.
        sigterm = self._resources.sigterm
        return sigterm is not None and sigterm.agreed

    def _leave_preempted(self) -> NoReturn:
        sigterm = self._resources.sigterm
        assert sigterm is not None  # preempted only once the trainer watches SIGTERM
        self.barrier()  # no worker leaves before the commit: its exit may stop the job
        sigterm.exit(self.checkpoints.is_leader)

    def _release(self, ok: bool) -> None:
        """Leave MXNet's job, then let the scheduler and server children end.

        With `ok` False (an error on the way out) this worker leaves without the
        barrier at exit, which would wait for the other workers forever.
        """
        resources = self._resources
        if resources.sigterm is not None:
            resources.sigterm.release()  # no save is coming: SIGTERM stops the process again
        kvstore, resources.kvstore = resources.kvstore, None
        if kvstore is not None:
            _leave(kvstore, barrier=ok)
        if resources.children is not None:
            resources.children.stop()

    def write_model(self, model: Any, folder: str, name: str) -> str:
        """Write the network's `<name>.params` into `folder`; return that file's name.

        For a hybridized network that has run, MXNet's export too (`<name>-symbol.json`,
        `<name>-0000.params`): what MXNet's serving tools load.
        """
        model.save_parameters(os.path.join(folder, f"{name}.params"))
        if internals.has_run_hybridized(model):
            model.export(os.path.join(folder, name))
        return f"{name}.params"

    def barrier(self) -> None:
        """Wait for every worker (a no-op without a kvstore)."""
        kvstore = self.kvstore
        if kvstore is not None:
            internals.barrier(kvstore)


def _leave(kvstore: Any, *, barrier: bool) -> None:
    """Leave the job now, after this worker's pending work, or at once without the barrier."""
    import mxnet as mx

    if barrier:
        mx.nd.waitall()
    else:
        internals.skip_exit_barrier(kvstore)
    internals.free(kvstore)


def _net_and_trainer(objects: tuple[Any, ...], what: str) -> tuple[Any, Any]:
    """(net, trainer or None) from a save's or a resume's objects."""
    if len(objects) in (1, 2):
        return objects[0], objects[1] if len(objects) == 2 else None
    raise UsageError(
        f"takes a net and its trainer, and got {len(objects)} object(s)",
        source=f"MXNetHandle.{what}",
        value=len(objects),
        expected=f"{what}(..., net) or {what}(..., net, trainer)",
    )

"""What `configure()` returns: the strategy, and the Keras helpers a training script needs."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from vtrain.cluster import EVALUATOR, WORKER
from vtrain.errors import UsageError
from vtrain.plugins.handle import Handle, Resumed
from vtrain_tensorflow.keras_callbacks import hypertune_callback, progress_callback
from vtrain_tensorflow.model_checkpoint import model_checkpoint
from vtrain_tensorflow.preemption import preemption_callback
from vtrain_tensorflow.tf_config_writer import uses_parameter_servers

if TYPE_CHECKING:
    from vtrain.preemption import PreemptionHandler
    from vtrain_tensorflow.keras_checkpoint import KerasCheckpoint
    from vtrain_tensorflow.stream_batches import StreamBatches

BACKUP = "backup"
EVALUATION = "eval"
STEP = "step"
"""In `resume()`'s `extra`: the committed step (batches trained) that was loaded."""


@dataclass(frozen=True)
class TensorFlowHandle(Handle):
    """This replica's strategy and role; helpers for callbacks, saving and evaluation.

    `world_size` counts the trainers of the collective: the chief and the workers
    under MultiWorkerMirroredStrategy, the workers under parameter-server training
    (the chief coordinates them). `num_replicas_in_sync` is the strategy's count
    of model replicas (one per GPU), which the global batch follows.
    """

    strategy: Any
    keras_version: str
    """tf_keras (legacy, for distributed training) or keras_3."""

    model_name: ClassVar[str] = "model.keras"
    # Saving a distributed model may run collective ops: every replica writes, the leader's lands.
    saves_collectively: ClassVar[bool] = True
    checkpoint_subfolder: ClassVar[str | None] = "keras"

    # Each defined beside the callback it builds, with its keyword list there alone.
    model_checkpoint = model_checkpoint
    preemption_callback = preemption_callback

    @property
    def world_size(self) -> int:
        """Trainers in the collective: chief and workers, or parameter-server training's workers."""
        if self.rank is not None and uses_parameter_servers(self.info):
            return sum(address is not None for address in self.info.cluster.get(WORKER, ()))
        return super().world_size

    def _step_of(self, resume: Resumed) -> int:
        # Keras' `done` counts epochs; the step a commit was made at is beside it.
        return int(resume.extra.get(STEP, resume.done))

    def _place(self, what: str) -> tuple[int, int]:
        """Under parameter-server training the coordinator reads the whole input.

        Keras hands the dataset the coordinator builds to every worker (tf-keras's
        data adapter): a share of 1/W there would train every worker on 1/W of it.
        """
        place = super()._place(what)
        return (0, 1) if uses_parameter_servers(self.info) else place

    @property
    def num_replicas_in_sync(self) -> int:
        """The strategy's replica count: the global batch is this times the per-replica one."""
        return int(self.strategy.num_replicas_in_sync)

    def scope(self) -> Any:
        """The strategy's scope: build and compile the model inside it."""
        return self.strategy.scope()

    @property
    def keras(self) -> Any:
        """`tf.keras`, routed to the Keras that `configure` chose."""
        import tensorflow as tf

        return tf.keras

    def _folder(self, kind: str) -> str:
        return os.path.join(self.context.checkpoint_dir, kind)

    # -- input ------------------------------------------------------------------------------

    def dataset(
        self,
        split: str = "training",
        *,
        format: str | None = None,
        by_record: bool = False,
        output_signature: Any = None,
        uri: str | None = None,
        client: Any = None,
    ) -> Any:
        """A tf.data.Dataset of this replica's `share` of `split`, which TensorFlow won't re-shard.

        Pass it to `fit` or `strategy.experimental_distribute_dataset` as it is:
        its AutoShardPolicy is OFF, since vtrain.data already gave every replica
        its own files (`by_record=True`: its own records of every file). TFRecord
        gives scalar tf.string records. JSON Lines and CSV give dicts shaped by
        `output_signature`, else by the first record (ints as int64, floats as
        float32, lists of any length); pass it when records vary, or when a
        replica may read nothing. `format`, `uri`, `client`: as vtrain.data.records.
        """
        from vtrain_tensorflow.data import share_dataset

        return share_dataset(
            self.share(split, by_record=by_record, uri=uri, client=client),
            format=format,
            output_signature=output_signature,
            environ=self.environ,
            client=client,
        )

    def _batches(
        self, stream: Any, *, batch_size: int, output_signature: Any = None
    ) -> StreamBatches:
        """`stream` as a tf.data.Dataset for `fit` (`.dataset`), `batch_size` records per worker
        and step; pass it to `model_checkpoint(data=...)` to commit the position with the model.

        `.dataset` is batched by the global batch (`batch_size` times the workers), as
        MultiWorkerMirroredStrategy expects; each epoch of `fit` reads one of the stream's.
        Records are typed by `output_signature`, else by the first record.
        """
        from vtrain_tensorflow.stream_batches import StreamBatches

        workers = 1 if self.rank is None else self._place("batches")[1]
        return StreamBatches(
            stream, batch_size=batch_size, workers=workers, output_signature=output_signature
        )

    # -- checkpoints, preemption, the model -------------------------------------------------

    @functools.cached_property
    def _sigterm_watches(self) -> list[PreemptionHandler]:
        return []

    def _watch_sigterm(self, handler: PreemptionHandler) -> None:
        """`preemption_callback`'s own SIGTERM flag, which `preempted` reads from then on."""
        self._sigterm_watches.append(handler)

    def _sigterm_here(self) -> bool:
        watches = self._sigterm_watches
        if watches:
            return any(handler.requested for handler in watches)
        return super()._sigterm_here()

    def _resume(
        self, model: Any, *, directory: str | None = None, filepath: str | None = None
    ) -> Resumed:
        """`resume(model)`: load the newest whole checkpoint; `done` is `fit`'s initial_epoch.

        Reads the committed steps of `checkpoints` (or `directory`), and the files
        a plain ModelCheckpoint wrote: into `filepath`'s folder, named as
        `filepath` formats them (e.g. `.../ckpt-{epoch:04d}.keras`), or by default
        any numbered .keras / .weights.h5 / .h5 file in AIP_CHECKPOINT_DIR. A torn
        file is skipped with a warning that names it. A step cut short mid-epoch
        gives that epoch again: it is replayed from its first batch. `uri` is the
        checkpoint loaded; a fresh start is falsy, `done` 0. Every replica must call it.
        """
        from vtrain.storage import open_location
        from vtrain_tensorflow.resume import continued, resume_from

        folder = self.context.checkpoint_dir if filepath is None else os.path.dirname(filepath)
        record = resume_from(
            model,
            self.strategy,
            manager=continued(self.checkpoint_manager(directory), self.environ),
            plain=open_location(folder, environ=self.environ),
            filepath=filepath,
        )
        if record is None:
            return Resumed()
        # `done` counts epochs, as `fit` resumes; the step is what the data's log line names.
        return Resumed(
            done=record.initial_epoch, uri=record.uri, extra={STEP: record.step}, data=record.data
        )

    def best(self, model: Any = None, *, directory: str | None = None) -> KerasCheckpoint | None:
        """The committed checkpoint with the best monitored value; loaded into `model` if given.

        Alone, `model` gets its weights and optimizer state; on a cluster, after `fit`,
        its weights (tf-keras cannot load into a trained distributed model's metrics).
        The checkpoints are those of `directory` (default: the handle's `checkpoints`);
        None when none recorded a monitored value. Every trainer calls it: it meets the
        others first, so that none reads an older best.
        """
        from vtrain_tensorflow import resume

        # The leader may still be committing the last epoch's checkpoint when another
        # worker gets here: meet first, or that worker would read an older best.
        self.barrier()
        manager = self.checkpoint_manager(directory)
        if model is None:
            return resume.best_of(manager)
        if not self.info.is_distributed:
            return resume.load_best(model, manager, self.strategy)
        from vtrain_tensorflow.keras_checkpoint import load_weights_through_twin

        def load(model: Any, path: str, strategy: Any) -> None:
            load_weights_through_twin(self.keras, model, path, strategy)

        return resume.load_best(model, manager, self.strategy, load)

    def write_model(self, model: Any, folder: str, name: str) -> str:
        """`model.save` as `name` in `folder`: a .keras file, or a SavedModel folder (tf-keras)."""
        model.save(os.path.join(folder, name))
        return name

    # -- Keras' own callbacks, the side-car evaluator ---------------------------------------

    def callbacks(
        self,
        *,
        monitor: str | None = None,
        tag: str | None = None,
        backup: bool = True,
        tensorboard: bool = True,
    ) -> list[Any]:
        """Progress, BackupAndRestore, TensorBoard, the tuning metric, checkpoints for an evaluator.

        The first marks each step `fit` trains, for the watchdog and `vtrain local run`'s
        live view: a `fit` without it makes no progress they can see. Every trainer passes
        the chief's real folders: legacy Keras gives each non-chief worker a private
        temporary folder inside, writes only the chief's, and restores every worker from
        it after a restart. The metric goes through `report`, from the leader; with
        `track.autolog()` on, each epoch's logs go to the job's run as well.

        `backup` and `tensorboard` (both True) add BackupAndRestore and TensorBoard in
        the job's folders. With `monitor` (a key of Keras' epoch logs, "val_loss"), that
        value is reported as the tuning metric after each epoch, under `tag` (default
        the job's metric tag). A cluster with an evaluator also gets a ModelCheckpoint of
        the weights, one per epoch, for `evaluate_checkpoints` to follow.
        """
        keras = self.keras
        found: list[Any] = [progress_callback(keras, self.track)]
        if backup:
            found.append(keras.callbacks.BackupAndRestore(backup_dir=self._folder(BACKUP)))
        if tensorboard:
            found.append(keras.callbacks.TensorBoard(log_dir=self.context.tensorboard_dir))
        if monitor is not None:
            found.append(hypertune_callback(keras, self.report, monitor, tag))
        if self.info.cluster.get(EVALUATOR):
            # The side-car evaluator follows these: weights only, one per epoch.
            found.append(
                keras.callbacks.ModelCheckpoint(
                    filepath=os.path.join(self._folder(EVALUATION), "ckpt-{epoch:04d}"),
                    save_weights_only=True,
                )
            )
        return found

    def evaluate_checkpoints(
        self,
        model: Any,
        data: Any,
        *,
        steps: int | None = None,
        max_evaluations: int | None = None,
        callbacks: list[Any] | None = None,
    ) -> None:
        """Run the side-car evaluator on the checkpoints the chief writes, as they appear.

        On the evaluator replica, Keras' SidecarEvaluator loads each into `model` (compiled)
        and evaluates it on `data`, `steps` batches of it (None: all), with `callbacks`;
        it stops after the checkpoint numbered `max_evaluations` (the epochs trained;
        None: it evaluates until it is stopped).
        Without legacy Keras (tf-keras) it raises `UsageError`.
        """
        if self.keras_version != "tf_keras":
            raise UsageError(
                "the side-car evaluator needs legacy Keras (tf-keras)",
                source="evaluate_checkpoints",
                value=self.keras_version,
                expected="an evaluator replica of a distributed job",
            )
        from vtrain_tensorflow.keras_checkpoint import build_optimizer

        # The chief's files hold the optimizer's state too. A compiled model that never
        # trained has no optimizer variables: each load would skip that state and log
        # "Value in checkpoint could not be found" per variable. Built, they take it.
        with self.strategy.scope():
            build_optimizer(model)
        self.keras.utils.SidecarEvaluator(
            model=model,
            data=data,
            checkpoint_dir=self._folder(EVALUATION),
            steps=steps,
            max_evaluations=max_evaluations,
            callbacks=callbacks,
        ).start()

    # -- together, and the end --------------------------------------------------------------

    def barrier(self) -> None:
        """Wait for every worker of MultiWorkerMirroredStrategy (a no-op otherwise).

        Call it on every trainer. It is one all-reduce of a scalar: each worker leaves
        it only after every other has reached it.
        """
        if self.world_size < 2 or uses_parameter_servers(self.info):
            return
        import tensorflow as tf

        one = self.strategy.run(lambda: tf.constant(1.0))
        self.strategy.reduce(tf.distribute.ReduceOp.SUM, one, axis=None)

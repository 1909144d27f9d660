"""What `configure()` returns: the strategy, and the Keras helpers a training script needs."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vtrain import RunContext, UsageError
from vtrain.cluster import EVALUATOR
from vtrain.plugins.base import Handle
from vtrain.preemption import DEFAULT_GRACE
from vtrain.storage import open_location
from vtrain_tensorflow.keras_callbacks import hypertune_callback

if TYPE_CHECKING:
    from vtrain.checkpoints import CheckpointManager
    from vtrain_tensorflow.keras_checkpoint import KerasCheckpoint

BACKUP = "backup"
EVALUATION = "eval"
KERAS = "keras"
"""The subfolder model_checkpoint and preemption_callback commit to, and resume reads."""


@dataclass(frozen=True)
class TensorFlowHandle(Handle):
    """This replica's strategy and role; helpers for callbacks, saving and evaluation."""

    strategy: Any
    keras_version: str
    """tf_keras (legacy, for distributed training) or keras_3."""
    context: RunContext
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ, repr=False)
    """The environment `configure` read: storage settings (the /gcs mount, the emulator)."""

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

    def checkpoint_dir(self, kind: str) -> str:
        """`<AIP_CHECKPOINT_DIR>/<kind>`: where the backups and evaluation checkpoints go."""
        return os.path.join(self.context.checkpoint_dir, kind)

    def checkpoint_manager(
        self,
        directory: str | None = None,
        *,
        keep: int | None = None,
        keep_every: int | None = None,
    ) -> CheckpointManager:
        """The CheckpointManager behind model_checkpoint, preemption_callback, resume and best.

        Default folder: `<AIP_CHECKPOINT_DIR>/keras`, already one per tuning trial;
        an explicit `directory` gets a `trial-<id>` subfolder under tuning.
        """
        from vtrain.checkpoints import CheckpointManager

        return CheckpointManager(
            self.checkpoint_dir(KERAS) if directory is None else directory,
            keep=keep,
            keep_every=keep_every,
            is_leader=self.is_leader,
            environ=self.environ,
            per_trial=directory is not None,
        )

    def model_checkpoint(
        self,
        monitor: str = "val_loss",
        verbose: int = 0,
        save_best_only: bool = False,
        save_weights_only: bool = False,
        mode: str = "auto",
        save_freq: str | int = "epoch",
        initial_value_threshold: float | None = None,
        *,
        keep: int | None = None,
        keep_every: int | None = None,
        directory: str | None = None,
        blocking: bool = False,
    ) -> Any:
        """Keras' ModelCheckpoint, with ModelCheckpoint's arguments, every save a committed step.

        Atomic on a local disk, /gcs and gs://; only the leader's copy lands;
        `keep` newest steps (plus every `keep_every`-th batch step) are kept;
        each step records its epoch, batch and `logs[monitor]` for `resume`
        and `best`. Every replica must run it, as Keras' own. Each step is
        committed in the background while training goes on, unless `blocking`.
        """
        from vtrain_tensorflow.model_checkpoint import model_checkpoint_callback

        return model_checkpoint_callback(
            self.keras,
            self.checkpoint_manager(directory, keep=keep, keep_every=keep_every),
            monitor=monitor,
            verbose=verbose,
            save_best_only=save_best_only,
            save_weights_only=save_weights_only,
            mode=mode,
            save_freq=save_freq,
            initial_value_threshold=initial_value_threshold,
            blocking=blocking,
        )

    def preemption_callback(
        self,
        *,
        grace: float = DEFAULT_GRACE,
        save_weights_only: bool = False,
        directory: str | None = None,
    ) -> Any:
        """On SIGTERM, commit one checkpoint at the next batch end, then exit 143 (restart me).

        Under parameter-server training, at the next epoch's end: Keras allows no batch
        hooks there.
        """
        from vtrain_tensorflow.preemption import preemption_callback
        from vtrain_tensorflow.tf_config_writer import uses_parameter_servers

        return preemption_callback(
            self.keras,
            self.checkpoint_manager(directory),
            grace=grace,
            save_weights_only=save_weights_only,
            batch_hooks=not uses_parameter_servers(self.info),
        )

    def resume(
        self, model: Any, *, directory: str | None = None, filepath: str | None = None
    ) -> int:
        """Load the newest whole checkpoint into `model`; return `fit`'s initial_epoch (0: none).

        Reads model_checkpoint's committed steps, and the files a plain
        ModelCheckpoint wrote: into `filepath`'s folder, named as `filepath`
        formats them (e.g. `.../ckpt-{epoch:04d}.keras`), or by default any
        numbered .keras / .weights.h5 / .h5 file in AIP_CHECKPOINT_DIR. A torn
        file is skipped with a warning that names it. Every replica must call it.
        """
        from vtrain_tensorflow.resume import resume_from

        folder = self.context.checkpoint_dir if filepath is None else os.path.dirname(filepath)
        record = resume_from(
            model,
            self.strategy,
            manager=self.checkpoint_manager(directory),
            plain=open_location(folder, environ=self.environ),
            filepath=filepath,
        )
        if record is None:
            return 0
        cut = "" if record.batch is None else f", cut short after batch {record.batch}"
        print(
            f"vtrain: resumed from {record.uri} (epoch {record.epoch + 1}{cut}); "
            f"initial_epoch={record.initial_epoch}",
            flush=True,
        )
        return record.initial_epoch

    def best(self, model: Any = None, *, directory: str | None = None) -> KerasCheckpoint | None:
        """The committed checkpoint with the best monitored value; loaded into `model` if given.

        Alone, `model` gets its weights and optimizer state; on a cluster, after `fit`,
        its weights (tf-keras cannot load into a trained distributed model's metrics).
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
        """A tf.data.Dataset of this replica's share of `split`, which TensorFlow will not re-shard.

        Pass it to `fit` or `strategy.experimental_distribute_dataset` as it is:
        its AutoShardPolicy is OFF, since vtrain.data already gave every replica
        its own files (`by_record=True`: its own records of every file). TFRecord
        gives scalar tf.string records. JSON Lines and CSV give dicts shaped by
        `output_signature`, else by the first record (ints as int64, floats as
        float32, lists of any length); pass it when records vary, or when a
        replica may read nothing. `format`, `uri`, `client`: as vtrain.data.records.
        """
        from vtrain.data import files
        from vtrain_tensorflow.data import share_dataset

        share = files(split, by_record=by_record, uri=uri, environ=self.environ, client=client)
        return share_dataset(
            share,
            format=format,
            output_signature=output_signature,
            environ=self.environ,
            client=client,
        )

    def barrier(self) -> None:
        """Wait for every worker of MultiWorkerMirroredStrategy (a no-op otherwise).

        Call it on every trainer. It is one all-reduce of a scalar: each worker leaves
        it only after every other has reached it.
        """
        from vtrain_tensorflow.tf_config_writer import uses_parameter_servers

        if self.info.num_trainers < 2 or uses_parameter_servers(self.info):
            return
        import tensorflow as tf

        one = self.strategy.run(lambda: tf.constant(1.0))
        self.strategy.reduce(tf.distribute.ReduceOp.SUM, one, axis=None)

    def callbacks(
        self,
        *,
        monitor: str | None = None,
        tag: str | None = None,
        backup: bool = True,
        tensorboard: bool = True,
    ) -> list[Any]:
        """BackupAndRestore, TensorBoard, the tuning metric, and checkpoints for an evaluator.

        Every trainer passes the chief's real folders: legacy Keras gives each
        non-chief worker a private temporary folder inside, writes only the
        chief's, and restores every worker from it after a restart.
        """
        keras = self.keras
        found: list[Any] = []
        if backup:
            found.append(keras.callbacks.BackupAndRestore(backup_dir=self.checkpoint_dir(BACKUP)))
        if tensorboard:
            found.append(keras.callbacks.TensorBoard(log_dir=self.context.tensorboard_dir))
        if monitor is not None:
            found.append(hypertune_callback(keras, monitor, tag))
        if self.info.cluster.get(EVALUATOR):
            # The side-car evaluator follows these: weights only, one per epoch.
            found.append(
                keras.callbacks.ModelCheckpoint(
                    filepath=os.path.join(self.checkpoint_dir(EVALUATION), "ckpt-{epoch:04d}"),
                    save_weights_only=True,
                )
            )
        return found

    def save_model(self, model: Any, name: str = "model.keras") -> str | None:
        """Save `model` to AIP_MODEL_DIR from the leader; return where, or None elsewhere.

        Every replica must call it: saving a distributed model may run collective
        ops. Other replicas save into a temporary folder that is then removed, as
        TensorFlow documents for multi-worker saving. Keras writes to a local
        folder first, so a gs:// model dir works without a FUSE mount.
        """
        with tempfile.TemporaryDirectory(prefix="vtrain-model-") as scratch:
            local = os.path.join(scratch, name)
            model.save(local)
            if not self.is_leader:
                return None
            target = open_location(self.context.model_dir, environ=self.environ)
            target.makedirs()
            target.upload(local, name)  # a file (.keras) or a folder (SavedModel)
            return target.join(name).uri

    def evaluate_checkpoints(
        self,
        model: Any,
        data: Any,
        *,
        steps: int | None = None,
        max_evaluations: int | None = None,
        callbacks: list[Any] | None = None,
    ) -> None:
        """Run the side-car evaluator on the checkpoints the chief writes, as they appear."""
        if self.keras_version != "tf_keras":
            raise UsageError(
                "the side-car evaluator needs legacy Keras (tf-keras)",
                source="evaluate_checkpoints",
                value=self.keras_version,
                expected="an evaluator replica of a distributed job",
            )
        self.keras.utils.SidecarEvaluator(
            model=model,
            data=data,
            checkpoint_dir=self.checkpoint_dir(EVALUATION),
            steps=steps,
            max_evaluations=max_evaluations,
            callbacks=callbacks,
        ).start()

"""What `configure()` returns: the strategy, and the Keras helpers a training script needs."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any

from vtrain import RunContext, UsageError
from vtrain.cluster import EVALUATOR
from vtrain.plugins.base import Handle
from vtrain.storage import open_location
from vtrain_tensorflow.keras_callbacks import hypertune_callback

BACKUP = "backup"
EVALUATION = "eval"


@dataclass(frozen=True)
class TensorFlowHandle(Handle):
    """This replica's strategy and role; helpers for callbacks, saving and evaluation."""

    strategy: Any
    keras_version: str
    """tf_keras (legacy, for distributed training) or keras_3."""
    context: RunContext

    @property
    def keras(self) -> Any:
        """`tf.keras`, routed to the Keras that `configure` chose."""
        import tensorflow as tf

        return tf.keras

    def checkpoint_dir(self, kind: str) -> str:
        """`<AIP_CHECKPOINT_DIR>/<kind>`: where the backups and evaluation checkpoints go."""
        return os.path.join(self.context.checkpoint_dir, kind)

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
            target = open_location(self.context.model_dir)
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

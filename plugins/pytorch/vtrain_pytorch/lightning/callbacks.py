"""Lightning callbacks: restart-safe checkpoints through vtrain, and the tuning metric."""

from __future__ import annotations

import os
from typing import Any

import torch
from lightning.pytorch import Callback, LightningModule, Trainer

import vtrain
from vtrain.checkpoints import CheckpointManager

CHECKPOINT_FILE = "lightning.ckpt"


class VtrainCheckpoint(Callback):
    """Saves the whole Trainer state each epoch as one committed vtrain checkpoint.

    Lightning's own ModelCheckpoint writes files in place: a replica killed
    mid-write leaves a `last.ckpt` that looks valid and is not. Here a step is
    committed whole or not at all, and only global rank 0 writes.
    """

    def __init__(self, manager: CheckpointManager, *, every_n_epochs: int = 1) -> None:
        self.manager = manager
        self.every_n_epochs = every_n_epochs

    def on_train_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Commit the state after every `every_n_epochs` epochs."""
        if (trainer.current_epoch + 1) % self.every_n_epochs or trainer.sanity_checking:
            return
        state = trainer._checkpoint_connector.dump_checkpoint(weights_only=False)
        if trainer.is_global_zero:
            self.manager.save(
                trainer.global_step,
                lambda folder: torch.save(state, os.path.join(folder, CHECKPOINT_FILE)),
            )
        trainer.strategy.barrier("vtrain-checkpoint")

    def resume_path(self) -> str | None:
        """A local path to the newest committed Trainer state, for `fit(ckpt_path=...)`."""
        checkpoint = self.manager.restore()
        if checkpoint is None or checkpoint.directory is None:
            return None
        return os.path.join(checkpoint.directory, CHECKPOINT_FILE)


class HypertuneCallback(Callback):
    """Reports a logged metric to the tuning service at the end of every epoch."""

    def __init__(self, monitor: str, *, tag: str | None = None) -> None:
        self.monitor = monitor
        self.tag = tag

    def on_train_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Report `monitor` from the chief, when it was logged this epoch."""
        value: Any = trainer.callback_metrics.get(self.monitor)
        if value is not None and trainer.is_global_zero:
            vtrain.hypertune.report(float(value), tag=self.tag, step=trainer.global_step)

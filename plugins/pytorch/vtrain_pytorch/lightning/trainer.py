"""Everything a Lightning `Trainer` needs to run on the cluster vtrain detected."""

from __future__ import annotations

from typing import Any, cast

from lightning.pytorch.loggers import TensorBoardLogger

import vtrain
from vtrain.plugins.handle import Resumed
from vtrain_pytorch.handle import TorchHandle
from vtrain_pytorch.lightning.callbacks import HypertuneCallback, VtrainCheckpoint, VtrainProgress
from vtrain_pytorch.lightning.environment import VtrainEnvironment
from vtrain_pytorch.lightning.logger import VtrainLogger


def trainer_options(
    *,
    monitor: str | None = None,
    handle: TorchHandle | None = None,
    keep: int | None = 3,
    every_n_train_steps: int | None = None,
    **configure_options: Any,
) -> dict[str, Any]:
    """Keyword arguments for `Trainer`: environment, nodes, devices, strategy, dirs, callbacks.

    The process group is initialised here, with vtrain's patient rendezvous and
    long timeout; Lightning then finds it ready. Checkpoints go through the handle's
    `checkpoints` (atomic, written by the leader only, the newest `keep` kept) instead of
    Lightning's ModelCheckpoint, and the metric through `handle.report`; each step marks
    progress for the watchdog and the live view (`VtrainProgress`); resume with
    `trainer.fit(model, ckpt_path=resume_path(options))`; with `handle.track.autolog()`
    on, what the module logs goes to the job's run too (`VtrainLogger`). `monitor` names a
    logged metric to report for hyperparameter tuning each epoch; `every_n_train_steps`
    commits mid-epoch too, so that a resume need not replay the epoch: with a
    `StreamLoader` the commit holds every rank's data position (see `resumed`).
    """
    if handle is None:
        handle = cast(TorchHandle, vtrain.plugins.get("pytorch").configure(**configure_options))
    if handle.world is None:
        raise vtrain.UsageError(
            f"a {handle.role} replica does not train",
            source="trainer_options",
            value=handle.role,
            expected="call it on the chief and the workers only (check handle.in_world)",
        )
    # Lightning opens gs:// itself only with gcsfs installed; through the /gcs/ mount
    # that Vertex provides, the same folders are local paths.
    checkpoint_dir = _local_view(handle, handle.context.checkpoint_dir)
    tensorboard_dir = _local_view(handle, handle.context.tensorboard_dir)
    manager = handle.checkpoint_manager(keep=keep)
    callbacks: list[Any] = [
        VtrainProgress(),
        VtrainCheckpoint(manager, every_n_train_steps=every_n_train_steps, track=handle.track),
    ]
    if monitor is not None:
        callbacks.append(HypertuneCallback(monitor, handle=handle))
    loggers: list[Any] = [TensorBoardLogger(save_dir=tensorboard_dir, name="", version="")]
    if handle.track.auto:  # `handle.track.autolog()`: what the module logs goes to the run
        loggers.append(VtrainLogger(handle))
    return {
        "plugins": [VtrainEnvironment(handle.world)],
        "num_nodes": handle.world.num_nodes,
        "devices": handle.world.local_world_size,
        "accelerator": "gpu" if handle.device.type == "cuda" else "cpu",
        "strategy": "ddp" if handle.world.world_size > 1 else "auto",
        "default_root_dir": checkpoint_dir,
        "logger": loggers if len(loggers) > 1 else loggers[0],
        "callbacks": callbacks,
        "enable_checkpointing": False,
    }


def _local_view(handle: TorchHandle, uri: str) -> str:
    from vtrain.storage import open_location

    return open_location(uri, environ=handle.environ).path or uri


def resume_path(options: dict[str, Any]) -> str | None:
    """The checkpoint to resume from, for `trainer.fit(..., ckpt_path=...)`; None at first start."""
    for callback in options["callbacks"]:
        if isinstance(callback, VtrainCheckpoint):
            return callback.resume_path()
    return None


def resumed(options: dict[str, Any]) -> Resumed:
    """The step `resume_path(options)` found, with its data position, for `handle.stream(resume=)`.

    Call it after `resume_path` and before `fit`; a fresh start is `Resumed()`.
    """
    for callback in options["callbacks"]:
        if isinstance(callback, VtrainCheckpoint):
            return callback.resumed()
    return Resumed()

"""Everything a Lightning `Trainer` needs to run on the cluster vtrain detected."""

from __future__ import annotations

from typing import Any

from lightning.pytorch.loggers import TensorBoardLogger

import vtrain
from vtrain.checkpoints import CheckpointManager
from vtrain_pytorch.handle import TorchHandle
from vtrain_pytorch.lightning.callbacks import HypertuneCallback, VtrainCheckpoint
from vtrain_pytorch.lightning.environment import VtrainEnvironment


def trainer_options(
    *,
    monitor: str | None = None,
    handle: TorchHandle | None = None,
    keep: int | None = 3,
    **configure_options: Any,
) -> dict[str, Any]:
    """Keyword arguments for `Trainer`: environment, nodes, devices, strategy, dirs, callbacks.

    The process group is initialised here, with vtrain's patient rendezvous and
    long timeout; Lightning then finds it ready. Checkpoints go through vtrain
    (atomic, written by the leader only) instead of Lightning's ModelCheckpoint; resume with
    `trainer.fit(model, ckpt_path=resume_path(options))`. `monitor` names a
    logged metric to report for hyperparameter tuning each epoch.
    """
    handle = handle or vtrain.plugins.get("pytorch").configure(**configure_options)
    if handle.world is None:
        raise vtrain.UsageError(
            f"a {handle.role} replica does not train",
            source="trainer_options",
            value=handle.role,
            expected="call it on the chief and the workers only (check handle.in_world)",
        )
    context = vtrain.RunContext.from_env()
    # Lightning opens gs:// itself only with gcsfs installed; through the /gcs/ mount
    # that Vertex provides, the same folders are local paths.
    checkpoint_dir = _local_view(context.checkpoint_dir)
    tensorboard_dir = _local_view(context.tensorboard_dir)
    manager = CheckpointManager(is_leader=handle.is_leader, keep=keep)
    callbacks: list[Any] = [VtrainCheckpoint(manager)]
    if monitor is not None:
        callbacks.append(HypertuneCallback(monitor))
    return {
        "plugins": [VtrainEnvironment(handle.world)],
        "num_nodes": handle.world.num_nodes,
        "devices": handle.world.local_world_size,
        "accelerator": "gpu" if handle.device.type == "cuda" else "cpu",
        "strategy": "ddp" if handle.world.world_size > 1 else "auto",
        "default_root_dir": checkpoint_dir,
        "logger": TensorBoardLogger(save_dir=tensorboard_dir, name="", version=""),
        "callbacks": callbacks,
        "enable_checkpointing": False,
    }


def _local_view(uri: str) -> str:
    from vtrain.storage import open_location

    return open_location(uri).path or uri


def resume_path(options: dict[str, Any]) -> str | None:
    """The checkpoint to resume from, for `trainer.fit(..., ckpt_path=...)`; None at first start."""
    for callback in options["callbacks"]:
        if isinstance(callback, VtrainCheckpoint):
            return callback.resume_path()
    return None

"""vtrain: one training script, alone, on a local cluster, and on the managed platforms.

`import vtrain` loads the standard library only; frameworks load inside plugins,
when a plugin is asked for.
"""

from __future__ import annotations

from vtrain.cluster import ClusterInfo
from vtrain.context import RunContext
from vtrain.errors import (
    CheckpointError,
    ConfigError,
    ConflictError,
    LaunchError,
    MissingExtraError,
    PluginError,
    StorageError,
    UsageError,
    VtrainError,
)

# `typing` costs milliseconds at start-up; these names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vtrain import checkpoints, data, hypertune, plugins, storage
    from vtrain.checkpoints import Checkpoint, CheckpointManager
    from vtrain.excepthook import one_line_errors
    from vtrain.outputs import print_outputs
    from vtrain.preemption import PreemptionHandler

__version__ = "0.1.0"


# Loaded on first use, so that a replica pays at start-up only for what it touches.
_LAZY = {
    "plugins": ("vtrain.plugins", None),
    "hypertune": ("vtrain.hypertune", None),
    "storage": ("vtrain.storage", None),
    "checkpoints": ("vtrain.checkpoints", None),
    "data": ("vtrain.data", None),
    "CheckpointManager": ("vtrain.checkpoints", "CheckpointManager"),
    "Checkpoint": ("vtrain.checkpoints", "Checkpoint"),
    "PreemptionHandler": ("vtrain.preemption", "PreemptionHandler"),
    "one_line_errors": ("vtrain.excepthook", "one_line_errors"),
    "print_outputs": ("vtrain.outputs", "print_outputs"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'vtrain' has no attribute {name!r}")
    import importlib

    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name)
    return module if attribute is None else getattr(module, attribute)


__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointManager",
    "ClusterInfo",
    "ConfigError",
    "ConflictError",
    "LaunchError",
    "MissingExtraError",
    "PluginError",
    "PreemptionHandler",
    "RunContext",
    "StorageError",
    "UsageError",
    "VtrainError",
    "checkpoints",
    "data",
    "hypertune",
    "one_line_errors",
    "plugins",
    "print_outputs",
    "storage",
]

"""vtrain: one training script, alone, on a local cluster, and on the managed platforms.

`import vtrain` loads the standard library only; frameworks load inside plugins,
when a plugin is asked for.
"""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from vtrain import plugins

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # `vtrain.plugins` loads on first use: a replica that never asks for a plugin
    # does not pay for the registry at start-up.
    if name == "plugins":
        import vtrain.plugins

        return vtrain.plugins
    raise AttributeError(f"module 'vtrain' has no attribute {name!r}")

__all__ = [
    "CheckpointError",
    "ClusterInfo",
    "ConfigError",
    "ConflictError",
    "LaunchError",
    "MissingExtraError",
    "PluginError",
    "RunContext",
    "StorageError",
    "UsageError",
    "VtrainError",
    "plugins",
]

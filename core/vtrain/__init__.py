"""vtrain: one training script, alone, on a local cluster, and on the managed platforms.

`import vtrain` loads the standard library only; frameworks load inside plugins,
when a plugin is asked for.
"""

from vtrain import plugins
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

__version__ = "0.1.0"

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

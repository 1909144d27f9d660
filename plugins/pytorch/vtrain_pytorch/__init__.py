"""vtrain's PyTorch and Lightning plugin: `vtrain.plugins.get("pytorch").configure()`.

Importing this package imports no torch; torch loads when `configure` runs.
"""

from vtrain_pytorch.handle import TorchHandle
from vtrain_pytorch.plugin import PyTorchPlugin
from vtrain_pytorch.world import World

__all__ = ["PyTorchPlugin", "TorchHandle", "World"]

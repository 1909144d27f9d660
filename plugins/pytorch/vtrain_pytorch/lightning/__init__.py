"""Lightning on a vtrain cluster: a ClusterEnvironment, Trainer options, callbacks.

Importing this package imports Lightning; `vtrain_pytorch` itself does not.
"""

from vtrain_pytorch.lightning.callbacks import HypertuneCallback, VtrainCheckpoint, VtrainProgress
from vtrain_pytorch.lightning.environment import VtrainEnvironment
from vtrain_pytorch.lightning.logger import VtrainLogger
from vtrain_pytorch.lightning.stream_loader import StreamLoader
from vtrain_pytorch.lightning.trainer import resume_path, resumed, trainer_options

__all__ = [
    "HypertuneCallback",
    "StreamLoader",
    "VtrainCheckpoint",
    "VtrainEnvironment",
    "VtrainLogger",
    "VtrainProgress",
    "resume_path",
    "resumed",
    "trainer_options",
]

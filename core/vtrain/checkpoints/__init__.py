"""Restart-safe checkpoints on a local disk, a Cloud Storage FUSE mount or gs://."""

from vtrain.checkpoints.checkpoint import Checkpoint
from vtrain.checkpoints.manager import CheckpointManager
from vtrain.checkpoints.manifest import FileEntry, Manifest
from vtrain.checkpoints.payload import Snapshot

__all__ = ["Checkpoint", "CheckpointManager", "FileEntry", "Manifest", "Snapshot"]

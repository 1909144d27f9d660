"""What the checks share: the platform's shared places, and what looks like a model."""

from __future__ import annotations

import os
import re

from vtrain.local.evidence import Run

SHARED = "a shared place (AIP_MODEL_DIR, AIP_CHECKPOINT_DIR, /gcs/ or gs://)"
# What a model or a checkpoint is saved as, by the frameworks vtrain runs.
_MODEL_SUFFIXES = frozenset(
    {
        ".pt",
        ".pth",
        ".ckpt",
        ".keras",
        ".h5",
        ".hdf5",
        ".params",
        ".safetensors",
        ".ubj",
        ".bst",
        ".joblib",
        ".pb",
        ".index",
        ".msgpack",
    }
)
_MODEL_WORDS = re.compile(r"checkpoint|ckpt|saved_model", re.IGNORECASE)
# Caches a framework fills by itself (downloaded weights, compiled kernels): not the job's.
_CACHES = ("home/.cache/", "home/.keras/", "home/.nv/", "home/.triton/")


def model_like(path: str) -> bool:
    if path.startswith(_CACHES) or "__pycache__" in path:
        return False
    base = os.path.basename(path)
    return os.path.splitext(base)[1].lower() in _MODEL_SUFFIXES or bool(_MODEL_WORDS.search(path))


def relative(run: Run, path: str) -> str | None:
    """`path` as a run's disk names it (``work/data.bin``), or None when it is elsewhere."""
    disk = run.disk
    if disk is None:
        return None
    if not os.path.isabs(path):
        return os.path.normpath(os.path.join("work", path))
    folder = os.path.dirname(disk.folder)  # <disks>/<name>: any run of any replica is below
    root = os.path.dirname(folder)
    if path.startswith(root + os.sep):
        parts = os.path.relpath(path, root).split(os.sep)
        return os.path.join(*parts[2:]) if len(parts) > 2 else None
    return None

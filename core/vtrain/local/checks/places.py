"""What the checks share: the platform's shared places, and what looks like a model."""

from __future__ import annotations

import os
import re

from vtrain.local.disks import DISKS_FOLDER
from vtrain.local.evidence import Evidence, Run

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
_CACHES = frozenset({".cache", ".keras", ".nv", ".triton", "__pycache__"})


def model_like(path: str) -> bool:
    if _CACHES.intersection(path.split(os.sep)):
        return False
    base = os.path.basename(path)
    return os.path.splitext(base)[1].lower() in _MODEL_SUFFIXES or bool(_MODEL_WORDS.search(path))


def where(ev: Evidence, path: str) -> str:
    """What `path` is on the platform: ``shared`` (seen by every replica, outlives them),
    ``vtrain`` (the rehearsal's own files), ``disk`` (a run's disk here) or ``local`` (any
    other path: the replica's machine's own, although here it is the host's)."""
    base = os.path.dirname(ev.model_dir.rstrip(os.sep))
    shared = (ev.model_dir, ev.checkpoint_dir, os.path.join(base, "logs"), "/gcs", *ev.shared)
    if any(_below(path, place) for place in shared):
        return "shared"
    if ev.trial_dir and _below(path, os.path.join(ev.trial_dir, DISKS_FOLDER)):
        return "vtrain" if os.path.basename(path).endswith(".record") else "disk"
    if ev.trial_dir and _below(path, ev.trial_dir):
        return "vtrain"
    return "local"


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(os.path.join(folder, ""))


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

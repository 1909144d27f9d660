"""What a stuck trainer waits for, read from where its main thread stands (a pure function).

The stack says more than any timer: a thread inside torch.distributed waits for its
peers, one inside vtrain.data for the data source. `waiting_for` takes the main
thread's frames, innermost last, as (file name, function) and names the innermost
place it knows. A `handle.long(what, ...)` block names its own, and wins (the handle
uses one for a commit the loop waits for, and for the model's upload).
"""

from __future__ import annotations

from collections.abc import Sequence

Frame = tuple[str, str]
"""(the frame's file name, its function's name)."""

# (a part of the file's path, a function name or "" for any) -> what it waits for; the
# innermost frame that matches names it. The more precise rows of a package come first.
PLACES: tuple[tuple[str, str, str], ...] = (
    ("/vtrain/plugins/wait.py", "", "a peer to start (vtrain's wait for the chief)"),
    ("/vtrain/checkpoints/", "", "the checkpoint commit (its writes and upload)"),
    ("/vtrain/storage/", "", "storage (a read or an upload)"),
    ("/vtrain/data/", "", "the data source (the next records)"),
    ("/torch/distributed/", "", "a torch.distributed collective (its peers)"),
    ("/torch/nn/parallel/distributed.py", "", "DDP's gradient all-reduce (its peers)"),
    ("/torch/_tensor.py", "backward", "loss.backward() (DDP's gradient all-reduce, its peers)"),
    ("/torch/autograd/", "", "loss.backward() (DDP's gradient all-reduce, its peers)"),
    ("/torch/utils/data/", "", "the DataLoader (its next batch)"),
    ("/lightning/", "", "the Lightning loop (a collective or the next batch)"),
    ("/xgboost/tracker.py", "", "the Rabit tracker"),
    ("/xgboost/collective.py", "", "an XGBoost collective (its peers)"),
    ("/xgboost/", "", "an XGBoost round (its allreduce with the other workers)"),
    ("/mxnet/kvstore", "", "the kvstore (the parameter servers and the other workers)"),
    ("/mxnet/", "", "MXNet (a kvstore push or pull, or the engine)"),
    ("/tensorflow/python/distribute/", "", "a tf.distribute collective (its peers)"),
    ("/keras/", "", "the Keras training loop (a collective or the next batch)"),
    ("/tensorflow/", "", "TensorFlow (a collective or the next batch)"),
)
# Said only where no frame above names a place: a lock inside a commit is the commit.
GENERIC: tuple[tuple[str, str, str], ...] = (
    ("/socket.py", "", "the network"),
    ("/ssl.py", "", "the network"),
    ("/threading.py", "wait", "a thread or a lock"),
)


PEER_START = PLACES[0][2]
STANDING = frozenset(
    {PEER_START, "the Rabit tracker", "a torch.distributed collective (its peers)"}
)
"""Waits for a peer by nature: a loop there that polls (vtrain's wait, a rendezvous) moves
its stack, but stands as still as a blocked call does."""


def waiting_for(frames: Sequence[Frame]) -> str | None:
    """What the innermost known frame of `frames` (outermost first) waits for; None: unknown."""
    for rows in (PLACES, GENERIC):
        for filename, function in reversed(frames):
            path = filename.replace("\\", "/")
            for part, name, what in rows:
                if part in path and (not name or name == function):
                    return what
    return None

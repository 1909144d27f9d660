"""What a stuck trainer waits for, from its main thread's frames (innermost last)."""

from __future__ import annotations

import pytest

from vtrain.progress.waits import waiting_for

SITE = "/venv/lib/python3.11/site-packages"
LOOP = ("/work/train.py", "main")

ROWS = [
    ([LOOP, (f"{SITE}/torch/_tensor.py", "backward")], "DDP's gradient all-reduce"),
    (
        [
            LOOP,
            (f"{SITE}/torch/distributed/c10d_logger.py", "wrapper"),
            (f"{SITE}/torch/distributed/distributed_c10d.py", "all_reduce"),
        ],
        "torch.distributed collective",
    ),
    (
        [
            LOOP,
            (f"{SITE}/vtrain/data/stream.py", "__next__"),
            ("/usr/lib/python3.11/socket.py", "recv"),
        ],
        "the data source",
    ),
    (
        [
            LOOP,
            (f"{SITE}/vtrain/checkpoints/manager.py", "close"),
            ("/usr/lib/python3.11/threading.py", "wait"),
        ],
        "the checkpoint commit",
    ),
    ([LOOP, (f"{SITE}/vtrain/plugins/wait.py", "wait_for")], "a peer to start"),
    ([LOOP, (f"{SITE}/xgboost/core.py", "update")], "XGBoost round"),
    ([LOOP, (f"{SITE}/xgboost/tracker.py", "wait_for")], "the Rabit tracker"),
    ([LOOP, (f"{SITE}/mxnet/kvstore/kvstore.py", "pull")], "the kvstore"),
    ([LOOP, (f"{SITE}/keras/src/backend/tensorflow/trainer.py", "fit")], "Keras training loop"),
    (
        [LOOP, (f"{SITE}/tensorflow/python/distribute/collective_all_reduce_strategy.py", "x")],
        "tf.distribute collective",
    ),
    ([LOOP, (f"{SITE}/lightning/pytorch/loops/fit_loop.py", "run")], "Lightning loop"),
    ([LOOP, ("/usr/lib/python3.11/socket.py", "recv")], "the network"),
    ([LOOP, ("/usr/lib/python3.11/threading.py", "wait")], "a thread or a lock"),
    ([LOOP, ("/usr/lib/python3.11/threading.py", "run")], None),
    ([LOOP], None),
    ([], None),
]


@pytest.mark.parametrize(("frames", "words"), ROWS)
def test_waiting_for(frames: list[tuple[str, str]], words: str | None) -> None:
    found = waiting_for(frames)
    if words is None:
        assert found is None
    else:
        assert found is not None and words in found

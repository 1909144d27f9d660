"""A benchmark trainer: boost trees in XGBoost's collective, joined through vtrain or by hand.

    python xgboost_job.py vtrain|plain

vtrain: configure() (the chief hosts the tracker) with its callbacks (a checkpoint
every 10 rounds, the tuning metric every round) and save_model. plain: enter the
collective of a tracker the launcher started, from DMLC_* variables; no callbacks.
Prints LAUNCH_TO_FIRST_ROUND (seconds from LAUNCHED_AT to the end of round 1)
and ROUNDS_PER_SECOND (after a warm-up of 5 rounds).
"""

import os
import sys
import time

import numpy as np
import xgboost as xgb
from xgboost import collective

ROUNDS, WARM_UP, ROWS = int(os.environ.get("ROUNDS", "60")), 5, 60_000
PARAMS = {"objective": "reg:squarederror", "tree_method": "hist", "max_depth": 6, "nthread": 1}


class Clock(xgb.callback.TrainingCallback):
    """Both sides carry it: when round 1 ended, and when the warm-up did."""

    def __init__(self) -> None:
        super().__init__()
        self.first = self.warm = 0.0

    def after_iteration(self, model, epoch, evals_log):
        if epoch == 0:
            self.first = time.time()
        if epoch == WARM_UP - 1:
            self.warm = time.perf_counter()
        return False


def train(rank: int, world: int, callbacks: list) -> xgb.Booster:
    rng = np.random.default_rng(rank)  # each trainer's own rows
    x = rng.normal(size=(ROWS, 20)).astype(np.float32)
    y = x @ np.linspace(0, 1, 20) + np.sin(3 * x[:, 0])
    d = xgb.DMatrix(x, label=y)
    clock = Clock()
    booster = xgb.train(
        PARAMS, d, ROUNDS, evals=[(d, "train")], verbose_eval=False, callbacks=[clock, *callbacks]
    )
    per_second = (ROUNDS - WARM_UP) / (time.perf_counter() - clock.warm)
    if rank == 0:
        print(f"LAUNCH_TO_FIRST_ROUND {clock.first - float(os.environ['LAUNCHED_AT']):.4f}")
        print(f"ROUNDS_PER_SECOND {per_second:.4f}", flush=True)
    return booster


if sys.argv[1] == "vtrain":
    import vtrain

    with vtrain.plugins.get("xgboost").configure() as handle:
        callbacks = handle.callbacks(checkpoint_every=10, metric="train-rmse")
        booster = train(handle.rank, handle.world_size, callbacks)
        handle.save_model(booster)
else:
    args = {
        "dmlc_tracker_uri": os.environ["DMLC_TRACKER_URI"],
        "dmlc_tracker_port": int(os.environ["DMLC_TRACKER_PORT"]),
        "dmlc_task_id": os.environ["DMLC_TASK_ID"],
    }
    with collective.CommunicatorContext(**args):
        train(collective.get_rank(), collective.get_world_size(), [])

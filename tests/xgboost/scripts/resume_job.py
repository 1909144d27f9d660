"""Boost on this trainer's share of AIP_TRAINING_DATA_URI, resuming the committed round.

RESULTS=folder   each trainer writes <run>-rank-<rank>.json there: the ids (labels) of its
                 share, the round it resumed, the rounds of its booster at the end
RUN=name         names the result files
KILL_AT=k        worker 0 SIGKILLs itself after round k, unless it resumed
"""

import json
import os
import signal
from pathlib import Path

import xgboost as xgb

import vtrain

ROUNDS, EVERY = 12, 2
PARAMS = {
    "objective": "reg:squarederror",
    "tree_method": "hist",
    "max_depth": 3,
    "nthread": 1,
    "max_bin": 16,
}
me = vtrain.ClusterInfo.from_env()


class KillAt(xgb.callback.TrainingCallback):
    """Dies like a preempted VM after round k."""

    def after_iteration(self, model, epoch, evals_log):
        if model.num_boosted_rounds() == int(os.environ["KILL_AT"]):
            os.kill(os.getpid(), signal.SIGKILL)
        return False


with vtrain.plugins.get("xgboost").configure() as handle:
    resumed = handle.resume()
    # The label is the record's id: what each trainer read is its labels.
    train = handle.dmatrix(label="id", features=["x"], max_bin=16)
    result = {
        "rank": handle.rank,
        "world_size": handle.world_size,
        "resumed": resumed.done,
        "was": resumed.extra.get("world_size"),
        "data": resumed.data,
        "ids": [int(i) for i in train.get_label()],
    }
    out = Path(os.environ["RESULTS"], f"{os.environ['RUN']}-rank-{handle.rank}.json")
    out.write_text(json.dumps(result))
    callbacks = handle.callbacks(checkpoint_every=EVERY)
    if "KILL_AT" in os.environ and (me.role, me.index) == ("worker", 0) and not resumed:
        callbacks.append(KillAt())
    booster = xgb.train(
        PARAMS,
        train,
        ROUNDS - resumed.done,
        xgb_model=resumed.state,
        callbacks=callbacks,
        verbose_eval=False,
    )
    result["rounds"] = booster.num_boosted_rounds()
    out.write_text(json.dumps(result))

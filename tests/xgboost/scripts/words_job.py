"""Train 6 rounds with the handle's common words, configured with an environment of its own.

GIVEN=folder     configure(environ=) names model, checkpoints and metrics folders under it,
                 not the ones the replica's own environment names
RESULTS=folder   each trainer writes <role>-<index>.json there: what the words gave
"""

import json
import os
from pathlib import Path

import numpy as np
import xgboost as xgb

import vtrain

given = Path(os.environ["GIVEN"])
env = {
    **os.environ,
    "AIP_MODEL_DIR": str(given / "model"),
    "AIP_CHECKPOINT_DIR": str(given / "checkpoints"),
    "CLOUD_ML_HP_METRIC_FILE": str(given / "metrics"),
}
PARAMS = {"objective": "reg:squarederror", "tree_method": "hist", "max_depth": 3, "nthread": 1}

with vtrain.plugins.get("xgboost").configure(environ=env) as handle:
    fresh = handle.resume()
    x = np.random.default_rng(0).normal(size=(600, 5))
    train = xgb.DMatrix(handle.row_block(x), label=handle.row_block(x @ np.arange(5.0)))
    booster = xgb.train(
        PARAMS,
        train,
        6,
        evals=[(train, "train")],
        callbacks=handle.callbacks(checkpoint_every=4, metric="train-rmse"),
        verbose_eval=False,
    )
    handle.barrier()  # the leader's last commit is in before anyone resumes
    resumed = handle.resume()
    items = list(range(7))
    result = {
        "rank": handle.rank,
        "fresh": [fresh.done, fresh.uri, fresh.state, bool(fresh)],
        "resumed": [resumed.done, resumed.uri, bool(resumed)],
        "same_booster": resumed.state.get_dump() == booster.get_dump(),
        "shard": handle.shard(items),
        "row_block": handle.row_block(items),
        "saved": handle.save_model(booster),
        "reported": handle.report(0.25, "final", step=6),
    }
    handle.save_checkpoint(7, booster, blocking=True, note="x")  # every trainer, as all saves
    handle.barrier()  # committed before anyone resumes
    noted = handle.resume()
    result["noted"] = [noted.done, dict(noted.extra), handle.distributed, handle.preempted]
    me = handle.info
    Path(os.environ["RESULTS"], f"{me.role}-{me.index}.json").write_text(json.dumps(result))

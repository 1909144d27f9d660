"""Train on this trainer's share of AIP_TRAINING_DATA_URI; each trainer writes what it saw.

RESULTS=folder            each trainer writes <role>-<index>.json there
BUDGET=n, BATCH_ROWS=k    dmatrix(memory_budget=n, batch_rows=k); else the defaults
PROBE=file.json           rows of features to predict, written into the result
"""

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import xgboost as xgb

import vtrain

ROUNDS = 30
PARAMS = {
    "objective": "reg:squarederror",
    "tree_method": "hist",
    "max_depth": 4,
    "eta": 0.3,
    "nthread": 1,
    "max_bin": 64,
}
options = {}
if "BUDGET" in os.environ:
    options = {
        "memory_budget": int(os.environ["BUDGET"]),
        "batch_rows": int(os.environ["BATCH_ROWS"]),
    }

me = vtrain.ClusterInfo.from_env()
with vtrain.plugins.get("xgboost").configure() as handle:
    train = handle.dmatrix(label="y", max_bin=64, **options)
    valid = handle.dmatrix("validation", label="y", ref=train, max_bin=64, **options)
    booster = xgb.train(PARAMS, train, ROUNDS, evals=[(valid, "validation")], verbose_eval=False)
    probe = np.array(json.loads(Path(os.environ["PROBE"]).read_text()), np.float32)
    dump = "".join(booster.get_dump(with_stats=True))
    result = {
        "rank": handle.rank,
        "world_size": handle.world_size,
        "rows": train.num_row(),
        "valid_rows": valid.num_row(),
        "labels": train.get_label().tolist(),
        "kinds": [type(train).__name__, type(valid).__name__],
        "features": train.feature_names,
        "model": hashlib.sha256(dump.encode()).hexdigest(),
        "predictions": booster.predict(
            xgb.DMatrix(probe, feature_names=train.feature_names)
        ).tolist(),
    }
    Path(os.environ["RESULTS"], f"{me.role}-{me.index}.json").write_text(json.dumps(result))

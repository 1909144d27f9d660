"""The example's training, with the hooks the tests need; each trainer writes what it saw.

RESULTS=folder      each replica writes <role>-<index>.json there
LATE=role:index:s   that replica starts s seconds late (several: comma-separated)
KILL_AT=k           worker 0 SIGKILLs itself after round k, unless it resumed
WAIT=s              configure(wait=s seconds)
API=sklearn         train with XGBRegressor instead of xgb.train
SUBSAMPLE=f         row subsampling (not restored on resume)
"""

import json
import os
import signal
import sys
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import xgboost as xgb
from xgboost import collective

import vtrain

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "xgboost"))
from train import booster_params, fingerprint, synthetic_data  # noqa: E402

ROUNDS, ROWS, EVERY = 40, 3000, 5
me = vtrain.ClusterInfo.from_env()
for late in filter(None, os.environ.get("LATE", "").split(",")):
    if late.rsplit(":", 1)[0] == f"{me.role}:{me.index}":
        time.sleep(float(late.rsplit(":", 1)[1]))
options = {"wait": timedelta(seconds=float(os.environ["WAIT"]))} if "WAIT" in os.environ else {}
handle = vtrain.plugins.get("xgboost").configure(**options)


class KillAt(xgb.callback.TrainingCallback):
    """Dies like a preempted VM after round k, on worker 0's first run."""

    def after_iteration(self, model, epoch, evals_log):
        if model.num_boosted_rounds() == int(os.environ["KILL_AT"]):
            os.kill(os.getpid(), signal.SIGKILL)
        return False


if handle.rank is None:  # ps, evaluator: outside the collective, nothing to train
    Path(os.environ["RESULTS"], f"{me.role}-{me.index}.json").write_text(
        json.dumps(
            {
                "role": me.role,
                "rank": handle.rank,
                "world_size": handle.world_size,
                "distributed": handle.distributed,
            }
        )
    )
    sys.exit(0)

with handle:
    args = type(
        "Args",
        (),
        {
            "max_depth": 4,
            "eta": 0.3,
            "nthread": 1,
            "subsample": float(os.environ.get("SUBSAMPLE", "1")),
        },
    )
    x, y = synthetic_data(ROWS)
    rows = handle.rows(ROWS)
    resumed = handle.resume()
    booster, done = resumed.state, resumed.done
    sklearn = os.environ.get("API") == "sklearn"
    metric = "validation_0-rmse" if sklearn else "validation-rmse"  # the estimator's eval name
    callbacks = handle.callbacks(checkpoint_every=EVERY, metric=metric)
    if "KILL_AT" in os.environ and (me.role, me.index) == ("worker", 0) and not done:
        callbacks.append(KillAt())
    if sklearn:
        model = xgb.XGBRegressor(
            n_estimators=ROUNDS - done, callbacks=callbacks, **booster_params(args)
        )
        model.fit(x[rows], y[rows], eval_set=[(x[rows], y[rows])], xgb_model=booster, verbose=False)
        booster = model.get_booster()
    else:
        train = xgb.DMatrix(x[rows], label=y[rows])
        booster = xgb.train(
            booster_params(args),
            train,
            num_boost_round=ROUNDS - done,
            evals=[(train, "validation")],
            xgb_model=booster,
            callbacks=callbacks,
            verbose_eval=False,
        )
    tracker_rank = collective.get_rank() if handle.distributed else 0
    where = handle.save_model(booster)
    result = {
        "role": me.role,
        "index": me.index,
        "rank": handle.rank,
        "tracker_rank": tracker_rank,
        "world_size": handle.world_size,
        "rows": [rows.start, rows.stop],
        "resumed": done,
        "model": fingerprint(booster),
        "rounds": booster.num_boosted_rounds(),
        "rmse": float(np.sqrt(np.mean((booster.predict(xgb.DMatrix(x)) - y) ** 2))),
        "is_leader": handle.is_leader,
        "saved": where,
        "platform": me.platform,
        "source": me.source,
        "tracker": handle.rendezvous.tracker_address,
        "dump": booster.get_dump(with_stats=True) if "DUMP" in os.environ else None,
    }
    Path(os.environ["RESULTS"], f"{me.role}-{me.index}.json").write_text(json.dumps(result))

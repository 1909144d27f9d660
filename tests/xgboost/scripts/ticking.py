"""Run the XGBoost example with a line per boosting round, for the fault matrix's figures.

    python ticking.py EXAMPLE [ARGS...]

Runs EXAMPLE as `__main__` with one more callback on `xgb.train`: after the K-th round
of this process it prints `vtrain-tick K TIME` (TIME: time.time()) and sleeps
ROUND_DELAY seconds (default 0.1), so that a kill lands mid-training and the tests
can tell which round was reached before it and when training went on after it.
"""

import os
import runpy
import sys
import time

import xgboost as xgb

DELAY = float(os.environ.get("ROUND_DELAY", "0.1"))


class Tick(xgb.callback.TrainingCallback):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def after_iteration(self, model, epoch, evals_log):
        self.count += 1
        print(f"vtrain-tick {self.count} {time.time():.3f}", flush=True)
        time.sleep(DELAY)
        return False


def train(*args, **kwargs):
    kwargs["callbacks"] = [*(kwargs.get("callbacks") or []), Tick()]
    return _train(*args, **kwargs)


_train, xgb.train = xgb.train, train
print(f"vtrain-start {time.time():.3f}", flush=True)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")

"""A tiny trial: maximise f(x, y) = -(x - 0.3)^2 - 0.1 * (y - 1)^2 and record what it was given."""

import argparse
import json
import os
import sys
import time

from vtrain.hypertune import report

p = argparse.ArgumentParser()
p.add_argument("--x", type=float, default=0.3)
p.add_argument("--y", type=int, default=1)
p.add_argument("--opt", default="adam")
p.add_argument("--records", required=True, help="folder where each run leaves a record")
p.add_argument("--sleep", type=float, default=0.0)
p.add_argument("--fail-above", type=float, help="exit 3 when x is above this")
p.add_argument("--tag", help="report under this tag instead of CLOUD_ML_HP_METRIC_TAG")
p.add_argument("--wait-for", help="block until this file exists (lets a test interrupt a trial)")
a = p.parse_args()

started = time.time()
env = os.environ
record = {
    "argv": sys.argv[1:],
    "trial": env.get("CLOUD_ML_TRIAL_ID"),
    "metric_file": env.get("CLOUD_ML_HP_METRIC_FILE"),
    "model_dir": env.get("AIP_MODEL_DIR"),
    "checkpoint_dir": env.get("AIP_CHECKPOINT_DIR"),
    "tensorboard_dir": env.get("AIP_TENSORBOARD_LOG_DIR"),
    "cluster_spec": env.get("CLUSTER_SPEC"),
    "environ": dict(env),
    "pid": os.getpid(),
    "started": started,
}
marker = os.path.join(a.records, f"started-{record['trial']}-{os.getpid()}")
open(marker, "w").close()
while a.wait_for and not os.path.exists(a.wait_for):
    time.sleep(0.02)
time.sleep(a.sleep)
if a.fail_above is not None and a.x > a.fail_above:
    sys.exit(3)
value = -((a.x - 0.3) ** 2) - 0.1 * (a.y - 1) ** 2
report(value - 1, tag=a.tag, step=1)  # an earlier, worse measurement
report(value, tag=a.tag, step=2)
record["ended"] = time.time()
with open(os.path.join(a.records, f"{record['trial']}-{os.getpid()}.json"), "w") as f:
    json.dump(record, f)

"""Run a script with the variables Kubeflow's XGBoostJob sets, made from the local Kubeflow ones.

`vtrain local run --platform kubeflow` writes a TFJob's TF_CONFIG and a
PyTorchJob's MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK. An XGBoostJob sets
no TF_CONFIG and adds WORKER_ADDRS (the workers' hosts) and WORKER_PORT (one
port for all): this drops the first and adds the others before running the
script. On Kubeflow each worker has its own host and they share one port;
locally they share a host and each has its own port. So WORKER_ADDRS names
distinct loopback hosts (127.0.1.i) with worker 0's port: addresses nobody
dials, since XGBoost's workers find each other through the tracker.
XGBJOB_WORLD_SIZE overrides WORLD_SIZE, as a misconfigured job would.
"""

import json
import os
import sys

config = json.loads(os.environ.pop("TF_CONFIG"))
workers = config["cluster"].get("worker", [])
if workers:
    os.environ["WORKER_ADDRS"] = ",".join(f"127.0.1.{i + 1}" for i in range(len(workers)))
    os.environ["WORKER_PORT"] = workers[0].rsplit(":", 1)[1]
if "XGBJOB_WORLD_SIZE" in os.environ:
    os.environ["WORLD_SIZE"] = os.environ["XGBJOB_WORLD_SIZE"]
os.execv(sys.executable, [sys.executable, *sys.argv[1:]])

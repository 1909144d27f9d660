"""One replica script for the verdict tests: `keep` follows every rule, each other mode breaks one.

argv: MODE [--epochs N]. A plain-Python job on a chief and one worker (Vertex's
variables): the chief saves the model, reports the metric, checkpoints; the
worker meets the chief over TCP.
"""

import argparse
import contextlib
import json
import os
import socket
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("mode")
if sys.argv[1:2] != ["args"]:
    parser.add_argument("--epochs", type=int, default=1)  # `args` refuses the job's flag
opts = parser.parse_args()
mode = opts.mode

spec = json.loads(os.environ["CLUSTER_SPEC"])
me = spec["task"]["type"]
chief_host, chief_port = spec["cluster"]["workerpool0"][0].rsplit(":", 1)
chief = me == "workerpool0"
model_dir, ckpt_dir = os.environ["AIP_MODEL_DIR"], os.environ["AIP_CHECKPOINT_DIR"]


def committed() -> int | None:
    steps = [int(n[5:]) for n in os.listdir(ckpt_dir) if n.startswith("step-")]
    return max(steps) if steps else None


# resume: a committed step is what a restart must start from.
start = committed() if mode != "resume" else None
print(f"starting at step {start or 0}", flush=True)
if chief and committed() is None:
    folder = os.path.join(ckpt_dir, "step-000000000005")
    os.makedirs(folder)
    with open(os.path.join(folder, "COMMIT.json"), "w") as f:
        f.write("{}")
    time.sleep(30)  # --kill chief:0 ends this first run
elif chief and mode == "resume":
    # resume, broken: the restart starts its loop over, and commits its first step again.
    folder = os.path.join(ckpt_dir, "step-000000000001")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "COMMIT.json"), "w") as f:
        f.write("{}")

# loopback: the chief serves on its cluster address (or, broken, on 127.0.0.1).
if chief:
    host = "127.0.0.1" if mode == "loopback" else chief_host
    with socket.create_server((host, int(chief_port))) as server:
        server.settimeout(5)
        with contextlib.suppress(TimeoutError):  # the worker gave up
            server.accept()[0].close()
else:
    for _ in range(100):
        try:
            socket.create_connection((chief_host, int(chief_port)), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)

# local-disk: a file the worker needs (broken: on the chief's own disk).
shared = "data.bin" if mode == "local-disk" else os.path.join(ckpt_dir, "data.bin")
if chief:
    with open(shared, "w") as f:
        f.write("data")
else:
    for _ in range(40):
        if os.path.exists(shared) or mode == "local-disk":
            break
        time.sleep(0.05)
    if mode == "local-disk":
        time.sleep(0.5)
    open(shared).close()

# leader: the chief saves the model (broken: every replica does).
if chief or mode == "leader":
    with open(os.path.join(model_dir, "model.bin"), "w") as f:
        f.write("weights")

# metric: reported under the study's tag (broken: under another).
if chief:
    tag = "loss" if mode == "metric" else os.environ.get("CLOUD_ML_HP_METRIC_TAG", "accuracy")
    with open(os.environ["CLOUD_ML_HP_METRIC_FILE"], "w") as f:
        f.write(json.dumps({"global_step": "1", tag: "0.9", "timestamp": 1.0, "trial": ""}) + "\n")

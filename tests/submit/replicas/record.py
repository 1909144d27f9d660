"""A replica of a rehearsed job: records `vtrain info --json`, its argv and its platform variables.

Usage: record.py OUT EXPECTED [the job's args...]. The chief waits until every
one of EXPECTED replicas has recorded, then succeeds, which ends the job; the
others wait to be stopped, as a parameter server would.
"""

import json
import os
import subprocess
import sys
import time

KEYS = (
    "CLUSTER_SPEC",
    "TF_CONFIG",
    "MASTER_ADDR",
    "MASTER_PORT",
    "WORLD_SIZE",
    "RANK",
    "MODE",
    "WORKER_ADDRS",
    "WORKER_PORT",
)

out, expected, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
info = json.loads(
    subprocess.run(
        [sys.executable, "-m", "vtrain", "info", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
)
env = {k: v for k, v in os.environ.items() if k in KEYS or k.startswith(("AIP_", "CLOUD_ML_"))}
name = f"{info['role']}-{info['index']}"
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, name + ".tmp"), "w") as f:
    json.dump({"info": info, "args": args, "env": env}, f)
os.replace(os.path.join(out, name + ".tmp"), os.path.join(out, name + ".json"))
if info["role"] != "chief":
    time.sleep(120)
    sys.exit(0)
deadline = time.monotonic() + 60
while len([n for n in os.listdir(out) if n.endswith(".json")]) < expected:
    if time.monotonic() > deadline:
        sys.exit(f"only {os.listdir(out)} of {expected} replicas recorded")
    time.sleep(0.05)

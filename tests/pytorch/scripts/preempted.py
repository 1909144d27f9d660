"""Worker 0 gets SIGTERM; both trainers see `handle.preempted`, then one save commits and ends.

RESULTS=folder   each trainer writes <role>-<index>.json: `preempted` before and after the
                 signal, before the save that ends the job
"""

import json
import os
import signal

import torch

import vtrain

me = vtrain.ClusterInfo.from_env()
handle = vtrain.plugins.get("pytorch").configure()
model = torch.nn.Linear(2, 1)
before = handle.preempted  # every trainer, at the same point: SIGTERM is a flag from here
handle.barrier()
if me.role == "worker":
    os.kill(os.getpid(), signal.SIGTERM)  # this worker alone: a spot VM reclaimed
after = handle.preempted  # agreed: True on the chief too
path = os.path.join(os.environ["RESULTS"], f"{me.role}-{me.index}.json")
with open(path, "w") as f:
    json.dump({"before": before, "after": after}, f)
handle.save_checkpoint(5, model, note="x")  # the last: the leader commits, every trainer exits 143
raise AssertionError("save_checkpoint returned after a preemption")

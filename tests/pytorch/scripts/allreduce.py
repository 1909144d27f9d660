"""Each replica joins the world through vtrain and all-reduces its rank + 1."""

import json
import os

import torch
import torch.distributed as dist

import vtrain

handle = vtrain.plugins.get("pytorch").configure()
result = {"role": handle.role, "rank": handle.rank, "world_size": handle.world_size}
if handle.in_world:
    value = torch.tensor([float(handle.rank + 1)])
    dist.all_reduce(value)
    result["sum"] = value.item()
    result["env"] = {k: os.environ[k] for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "NODE_RANK")}
    handle.teardown()
name = f"{handle.role}-{os.environ.get('CLOUD_ML_JOB_ID', 'job')}-{os.getpid()}.json"
with open(os.path.join(os.environ["RESULTS"], name), "w") as f:
    json.dump(result, f)

"""Each replica joins the world through vtrain and all-reduces its rank + 1.

LATE=role:index:seconds makes that replica start its rendezvous late.
"""

import json
import os
import time

import torch
import torch.distributed as dist

import vtrain

late = os.environ.get("LATE")
if late:
    role, index, seconds = late.split(":")
    me = vtrain.ClusterInfo.from_env()
    if (me.role, me.index) == (role, int(index)):
        time.sleep(float(seconds))

handle = vtrain.plugins.get("pytorch").configure()
result = {
    "role": handle.role,
    "rank": handle.rank,
    "world_size": handle.world_size,
    "is_leader": handle.is_leader,
    # Read again after configure() rewrote RANK & co.: must agree (checkpoints, metrics).
    "is_chief_again": vtrain.ClusterInfo.from_env().is_chief,
}
if handle.rank is not None:
    value = torch.tensor([float(handle.rank + 1)])
    dist.all_reduce(value)
    result["sum"] = value.item()
    result["env"] = {k: os.environ[k] for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "NODE_RANK")}
with open(os.path.join(os.environ["RESULTS"], f"{handle.role}-{os.getpid()}.json"), "w") as f:
    json.dump(result, f)
# Nobody leaves before everyone has written: the chief's exit ends the job.
handle.barrier()
handle.close()

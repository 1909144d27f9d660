"""Each replica configures torch with an environment of its own and uses the handle's words.

The model, checkpoint and metric places are set only in that environment, under
RESULTS; os.environ keeps the job's own. Each replica writes what it saw to
RESULTS/<role>-<index>.json.
"""

import json
import os

import torch

import vtrain
from vtrain.plugins.handle import Resumed

results = os.environ["RESULTS"]
me = vtrain.ClusterInfo.from_env()
name = f"{me.role}-{me.index}"
env = dict(os.environ)
env.update(
    AIP_MODEL_DIR=os.path.join(results, "model"),
    AIP_CHECKPOINT_DIR=os.path.join(results, "checkpoints"),
    CLOUD_ML_HP_METRIC_FILE=os.path.join(results, f"{name}.metrics"),
)
handle = vtrain.plugins.get("pytorch").configure(environ=env)


def trained(seed: int) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    """A model of its own weights, and an optimizer with a state (momentum) after one step."""
    torch.manual_seed(seed)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.full((1, 3), seed + 1.0)).sum().backward()  # a momentum of its own, too
    optimizer.step()
    return model, optimizer


def weights(model: torch.nn.Module) -> list[float]:
    return torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()


def momentum(optimizer: torch.optim.Optimizer) -> list[list[float]]:
    return [
        s["momentum_buffer"].flatten().tolist() for s in optimizer.state_dict()["state"].values()
    ]


def seen(found: Resumed) -> list[object]:
    return [bool(found), found.done, found.uri, dict(found.extra)]


model, optimizer = trained(seed=handle.rank)
before = handle.resume(model, optimizer)
handle.barrier()  # every replica has looked before the leader saves
saved = handle.save_checkpoint(7, model, optimizer, epoch=3, note="x")  # in the background
handle.checkpoints.wait()
handle.barrier()  # committed before any replica looks for it
fresh = torch.nn.Linear(3, 1)
fresh_optimizer = torch.optim.SGD(fresh.parameters(), lr=0.1, momentum=0.9)
after = handle.resume(fresh, fresh_optimizer)
result = {
    "rank": handle.rank,
    "is_leader": handle.is_leader,
    "distributed": handle.distributed,
    "preempted": handle.preempted,
    "before": seen(before),
    "saved": saved,
    "directory": handle.checkpoints.directory,
    "after": seen(after),
    "weights": weights(model),
    "resumed": weights(fresh),
    "momentum": momentum(fresh_optimizer),
    "expected_momentum": momentum(optimizer),
    "reported": handle.report(0.25, "loss", step=7),
    "model": handle.save_model(model),
}
with open(os.path.join(results, f"{name}.json"), "w") as f:
    json.dump(result, f)
# Nobody leaves before everyone has written: the chief's exit ends the job.
handle.barrier()
handle.close()

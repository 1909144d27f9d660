"""DDP over one epoch of a split read through handle.stream, committing the data position.

Each process resumes the newest commit (model, optimizer and every process's
data position), reads the rest of the epoch in batches through a DataLoader,
and appends each step's ids to RESULTS/ids-<run>-rank-<r>.jsonl before training
on them. Every `--save-every` steps all processes save (the position is
gathered); `--die-after S` SIGKILLs the chief after step S, mid-epoch.
Processes whose share runs out first take empty steps, so all take as many.
"""

import argparse
import json
import os
import signal

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

import vtrain
from vtrain_pytorch.data import StreamDataset


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--run", required=True)
    parser.add_argument("--save-every", type=int, default=3)
    parser.add_argument("--die-after", type=int, default=0)
    args = parser.parse_args()

    handle = vtrain.plugins.get("pytorch").configure()
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    found = handle.resume(model, optimizer)
    step = found.done
    data = handle.stream("training", resume=found, shuffle_seed=5, buffer=16)
    batches = iter(DataLoader(StreamDataset(data), batch_size=4, collate_fn=list))
    ddp = handle.wrap(model)
    name = f"ids-{args.run}-rank-{handle.rank}.jsonl"
    with open(os.path.join(os.environ["RESULTS"], name), "a") as out:
        while True:
            batch = next(batches, [])
            going = torch.tensor([len(batch)])
            dist.all_reduce(going)  # the epoch ends when every process's share is read
            if not going.item():
                break
            step += 1
            out.write(json.dumps({"step": step, "ids": [r["id"] for r in batch]}) + "\n")
            out.flush()
            x = torch.tensor([[float(r["id"])] for r in batch]).reshape(-1, 1)
            optimizer.zero_grad()
            ddp(x).sum().backward()
            optimizer.step()
            if step % args.save_every == 0:
                handle.save_checkpoint(step, model, optimizer, data=data, blocking=True)
            if step == args.die_after and handle.rank == 0:
                os.kill(os.getpid(), signal.SIGKILL)
    print(f"epoch done at step {step}", flush=True)
    handle.barrier()
    handle.close()


if __name__ == "__main__":
    main()

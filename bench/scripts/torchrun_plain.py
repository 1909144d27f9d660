"""The PyTorch example's training, as a torchrun user writes it without vtrain.

DDP on gloo, the same model, data, batches and step delay as examples/pytorch/train.py;
rank 0 saves `{"model", "optimizer", "step"}` with `torch.save` every --checkpoint-every
steps (to a temporary file, then renamed), and every rank resumes from the newest file,
as torchrun's documentation shows for `--max-restarts`. Each step prints `step N TIME`.
"""

from __future__ import annotations

import argparse
import glob
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

FEATURES = 8


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--global-batch-size", type=int, default=48)
    parser.add_argument("--samples", type=int, default=960)
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument("--step-delay", type=float, default=0.0)
    parser.add_argument("--checkpoints", required=True)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    generator = torch.Generator().manual_seed(1234)
    x = torch.randn(args.samples, FEATURES, generator=generator)
    y = x @ (torch.arange(1.0, FEATURES + 1) / FEATURES) + 0.1 * torch.randn(
        args.samples, generator=generator
    )
    dataset = TensorDataset(x, y.unsqueeze(1))
    torch.manual_seed(0)
    model = torch.nn.Linear(FEATURES, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    step = 0
    saved = sorted(glob.glob(os.path.join(args.checkpoints, "step-*.pt")))
    if saved:  # resume from the newest file, as torchrun's documentation shows
        state = torch.load(saved[-1])
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step = state["step"]
        print(f"resumed from step {step}", flush=True)
    ddp = DistributedDataParallel(model)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(
        dataset, batch_size=args.global_batch_size // world, sampler=sampler, drop_last=True
    )
    per_epoch = len(loader)
    while step < args.steps:
        sampler.set_epoch(step // per_epoch)
        for i, (bx, by) in enumerate(loader):
            if i < step % per_epoch:
                continue
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(ddp(bx), by).backward()
            optimizer.step()
            step += 1
            print(f"step {step} {time.time():.3f}", flush=True)
            if rank == 0 and (step % args.checkpoint_every == 0 or step == args.steps):
                path = os.path.join(args.checkpoints, f"step-{step:09d}.pt")
                torch.save(
                    {
                        "model": model.state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "step": step,
                    },
                    path + ".tmp",
                )
                os.replace(path + ".tmp", path)
            time.sleep(args.step_delay)
            if step >= args.steps:
                break
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

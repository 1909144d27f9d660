"""A benchmark replica: join the world (through vtrain, or plain env:// as with torchrun),
then all-reduce, or train DDP steps and print the steps per second.

    python torch_job.py vtrain|plain allreduce|ddp
"""

import os
import sys
import time

import torch
import torch.distributed as dist

setup, work = sys.argv[1], sys.argv[2]
if setup == "vtrain":
    import vtrain

    handle = vtrain.plugins.get("pytorch").configure()
    rank = handle.rank
else:
    dist.init_process_group("gloo")  # env:// from torchrun or a hand-set environment
    rank = dist.get_rank()

if work == "allreduce":
    tensor = torch.ones(1 << 18)
    for _ in range(20):
        dist.all_reduce(tensor)
else:
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
    steps = int(os.environ.get("STEPS", "300"))
    for step in range(steps + 20):
        if step == 20:  # after warm-up
            start = time.perf_counter()
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    if rank == 0:
        print(f"STEPS_PER_SECOND {steps / (time.perf_counter() - start):.2f}", flush=True)
dist.barrier()
dist.destroy_process_group()

"""Train a small regression model with DistributedDataParallel on synthetic data.

The same script runs alone (`python train.py`), on a local cluster
(`vtrain local run --workers 2 -- python train.py`), and unchanged on Vertex AI,
AI Platform, Kubeflow or torchrun. The chief checkpoints every few steps; a
restarted replica resumes from the newest committed step, so a killed job ends
with the same parameters as an uninterrupted one. Run alone, each run starts
fresh in a checkpoint folder of its own.

Hyperparameters are global: the batch is split across the replicas, so the
result does not depend on how many there are.
"""

from __future__ import annotations

import argparse
import json
import time

import vtrain

# Before the framework's import: a missing framework or a vtrain error then ends the script
# with one line that says what to do (`pip install "vtrain[pytorch]"`), not a traceback.
vtrain.one_line_errors()

import torch
from torch.utils.data import DataLoader, TensorDataset

FEATURES = 8


def synthetic_data(samples: int) -> TensorDataset:
    """y = x . w + noise, the same on every replica (fixed seed)."""
    generator = torch.Generator().manual_seed(1234)
    x = torch.randn(samples, FEATURES, generator=generator)
    w = torch.arange(1.0, FEATURES + 1) / FEATURES
    y = x @ w + 0.1 * torch.randn(samples, generator=generator)
    return TensorDataset(x, y.unsqueeze(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--global-batch-size", type=int, default=48)
    parser.add_argument("--samples", type=int, default=960)
    parser.add_argument("--learning-rate", "--learning_rate", type=float, default=0.05)
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds to sleep per step")
    parser.add_argument("--job-dir", help="AI Platform's jobDir; outputs go to vtrain's folders")
    args = parser.parse_args()

    handle = vtrain.plugins.get("pytorch").configure()
    if handle.rank is None:
        print(f"{handle.role} replica: not part of the torch world, nothing to do")
        return
    if args.global_batch_size % handle.world_size:
        parser.error(f"--global-batch-size must be a multiple of {handle.world_size} replicas")

    torch.manual_seed(0)
    model = torch.nn.Linear(FEATURES, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate)
    # The newest 3 steps are enough to resume; older ones would only fill the disk.
    handle.checkpoints.retain(keep=3)
    resumed = handle.resume(model, optimizer)  # every replica loads the same committed step
    step = resumed.done
    where = handle.checkpoints.directory
    print(f"rank {handle.rank}/{handle.world_size}: starting at step {step} ({where})", flush=True)
    if resumed:
        print(f"resumed from step {step}", flush=True)

    # The job's run (one per job, reopened by a restarted leader); only the leader writes.
    handle.track.params(vars(args))
    ddp = handle.wrap(model)
    dataset = synthetic_data(args.samples)
    sampler = handle.sampler(dataset, shuffle=True, seed=0)
    loader = DataLoader(
        dataset,
        batch_size=args.global_batch_size // handle.world_size,
        sampler=sampler,
        drop_last=True,
    )
    per_epoch = len(loader)
    while step < args.steps:
        sampler.set_epoch(step // per_epoch)
        for i, (x, y) in enumerate(loader):
            if i < step % per_epoch:
                continue  # trained before a restart: the batch order is a function of the step
            optimizer.zero_grad()
            x, y = x.to(handle.device), y.to(handle.device)
            loss = torch.nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            optimizer.step()
            step += 1
            # The watchdog and the live view count it; the total gives a TrainJob its progress.
            handle.step(step, total=args.steps)
            handle.track.metrics({"train_loss": loss.item()}, step=step)
            if step % args.checkpoint_every == 0 or step == args.steps:
                handle.save_checkpoint(step, model, optimizer)  # every trainer; the leader commits
            time.sleep(args.step_delay)
            if step >= args.steps:
                break

    with torch.no_grad():
        x, y = (t.to(handle.device) for t in dataset.tensors)
        loss = torch.nn.functional.mse_loss(model(x), y)
    handle.report(loss.item(), tag="loss", step=step)  # the tuning metric, from the leader
    handle.save_model(model)  # the leader writes AIP_MODEL_DIR (gs:// included)
    params = torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()
    print(f"final loss {loss.item():.6f}", flush=True)
    print("final parameters " + json.dumps(params), flush=True)
    handle.barrier()  # every replica has printed before the chief ends the job
    handle.close()  # the last checkpoint is committed before the process group goes
    vtrain.print_outputs()  # run alone: where the model, checkpoints, logs and metric are


if __name__ == "__main__":
    main()

"""The README's training script: a linear model, trained restart-safe alone or on any cluster."""

import torch

import vtrain

handle = vtrain.plugins.get("pytorch").configure()  # this replica's rank, torch.distributed
torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
step = handle.resume(model, optimizer).done  # the last commit's step after a restart, else 0
ddp = handle.wrap(model)  # DistributedDataParallel on a cluster, the model itself alone
data = torch.Generator().manual_seed(handle.rank)  # each trainer its own batches
while step < 100:
    x = torch.randn(32, 8, generator=data)
    y = x.sum(1, keepdim=True) / 8 + 0.1 * torch.randn(32, 1, generator=data)
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    step += 1
    if step % 20 == 0:
        handle.save_checkpoint(step, model, optimizer)  # every trainer calls; the leader commits
print(f"rank {handle.rank}: {step} steps, loss {loss.item():.4f}", flush=True)
handle.report(loss.item(), tag="loss")  # the tuning metric, from the leader
handle.save_model(model)  # AIP_MODEL_DIR (gs:// included), from the leader
handle.close()  # the last commit lands before the process group goes
vtrain.print_outputs()  # alone: where the model, checkpoints and metric went

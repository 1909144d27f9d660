"""Train a small Lightning model on synthetic data with DDP across the replicas.

Runs alone (`python train.py`), on a local cluster
(`vtrain local run --workers 2 -- python train.py`), and unchanged on Vertex AI,
AI Platform, Kubeflow or torchrun. Lightning does not detect Vertex by itself;
`trainer_options()` hands it the cluster, vtrain's checkpoints (each epoch,
atomic, resumed after a restart), TensorBoard at AIP_TENSORBOARD_LOG_DIR and the
tuning metric.
"""

from __future__ import annotations

import argparse
import json

import vtrain

# Before the framework's import: a missing framework or a vtrain error then ends the script
# with one line that says what to do (`pip install "vtrain[lightning]"`), not a traceback.
vtrain.one_line_errors()

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

from vtrain_pytorch.lightning import resume_path, trainer_options

FEATURES = 8


class Regression(L.LightningModule):
    """A linear model fitted with mean squared error."""

    def __init__(self, learning_rate: float) -> None:
        super().__init__()
        self.learning_rate = learning_rate
        self.layer = torch.nn.Linear(FEATURES, 1)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], index: int) -> torch.Tensor:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss, on_epoch=True, on_step=False, sync_dist=True)
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=self.learning_rate)


def synthetic_data(samples: int) -> TensorDataset:
    """y = x . w + noise, the same on every replica (fixed seed)."""
    generator = torch.Generator().manual_seed(1234)
    x = torch.randn(samples, FEATURES, generator=generator)
    w = torch.arange(1.0, FEATURES + 1) / FEATURES
    y = x @ w + 0.1 * torch.randn(samples, generator=generator)
    return TensorDataset(x, y.unsqueeze(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16, help="per replica")
    parser.add_argument("--samples", type=int, default=480)
    parser.add_argument("--learning-rate", "--learning_rate", type=float, default=0.05)
    parser.add_argument("--job-dir", help="AI Platform's jobDir; outputs go to vtrain's folders")
    args = parser.parse_args()

    handle = vtrain.plugins.get("pytorch").configure()
    if handle.rank is None:
        print(f"{handle.role} replica: not part of the training world, nothing to do")
        return
    handle.track.autolog().params(vars(args))  # the job's one run, reopened after a restart
    torch.manual_seed(0)
    model = Regression(args.learning_rate)
    # Lightning saves and resumes its Trainer itself: the options route its checkpoints through
    # handle.checkpoints and "train_loss" through handle.report.
    options = trainer_options(handle=handle, monitor="train_loss")
    trainer = L.Trainer(max_epochs=args.epochs, enable_progress_bar=False, **options)
    dataset = synthetic_data(args.samples)
    # The same sampler alone and distributed: one shuffled order, split across the ranks.
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=handle.sampler(dataset))
    trainer.fit(model, loader, ckpt_path=resume_path(options))

    params = torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()
    print(
        f"global rank {trainer.global_rank} of {trainer.world_size}, node {trainer.node_rank}",
        flush=True,
    )
    print("final parameters " + json.dumps(params), flush=True)
    handle.save_model(model)  # the leader writes AIP_MODEL_DIR (gs:// included)
    handle.barrier()
    handle.close()
    vtrain.print_outputs()  # run alone: where the model, checkpoints, logs and metric are


if __name__ == "__main__":
    main()

"""Train a few steps and print the progress the watchdog saw (tests/progressed.py).

argv: MODE. `loop`: a hand-written loop over `handle.batches` (each batch a step);
`explicit`: the same loop calling `handle.step()`; `lightning`: `Trainer.fit` with
`trainer_options`, 10 steps and 3 validation batches an epoch (AIP_TRAINING_DATA_URI
unused). The stream's split holds 40 records: 10 batches of 4.
"""

import sys

import torch
from progressed import said

import vtrain

mode = sys.argv[1]
handle = vtrain.plugins.get("pytorch").configure()
model = torch.nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def train(x: torch.Tensor) -> None:
    optimizer.zero_grad()
    model(x.float().unsqueeze(1)).pow(2).mean().backward()
    optimizer.step()


if mode in ("loop", "explicit"):
    batches = handle.batches(handle.stream("training"), batch_size=4, transform=lambda r: r["x"])
    for step, x in enumerate(batches, start=1):
        train(x)
        if mode == "explicit":
            handle.step(step)
else:
    import lightning as L
    from torch.utils.data import DataLoader, TensorDataset

    from vtrain_pytorch.lightning import trainer_options

    class Model(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch: list[torch.Tensor], index: int) -> torch.Tensor:
            return self.layer(batch[0]).pow(2).mean()

        def validation_step(self, batch: list[torch.Tensor], index: int) -> None:
            self.layer(batch[0])

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    data = TensorDataset(torch.arange(40.0).unsqueeze(1))
    trainer = L.Trainer(
        max_epochs=2,
        limit_train_batches=5,
        limit_val_batches=3,
        enable_progress_bar=False,
        enable_model_summary=False,
        **trainer_options(handle=handle),
    )
    trainer.fit(Model(), DataLoader(data, batch_size=4), DataLoader(data, batch_size=4))
said()
handle.close()

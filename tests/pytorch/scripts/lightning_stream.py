"""Lightning DDP over one epoch of a split through a StreamLoader, committing mid-epoch.

Each process resumes the newest commit (the Trainer's state and every
process's data position) and fits on the rest of the epoch. `training_step`
appends the ids it trains on to RESULTS/ids-<run>-rank-<r>.jsonl, with the
step, so Lightning's fetch ahead cannot fool the count. Commits every
`--save-every` steps; `--die-after S` SIGKILLs the chief after step S,
mid-epoch. A process whose share ran out takes empty steps (an empty batch,
a zero loss) while the others train on.
"""

import argparse
import json
import os
import signal
from typing import Any

import lightning as L
import torch

import vtrain
from vtrain_pytorch.lightning import StreamLoader, resume_path, resumed, trainer_options


def ids_of(records: list[dict[str, Any]]) -> torch.Tensor:
    return torch.tensor([r["id"] for r in records], dtype=torch.long)


class Ids(L.LightningModule):
    """A linear model of the ids, which logs every id it trains on."""

    def __init__(self, log: str, die_after: int) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(1, 1)
        self.log_path = log
        self.die_after = die_after

    def training_step(self, batch: torch.Tensor, index: int) -> torch.Tensor:
        with open(self.log_path, "a") as out:
            step = self.trainer.global_step + 1
            out.write(json.dumps({"step": step, "ids": batch.tolist()}) + "\n")
        if len(batch) == 0:  # an empty step: this share ran out, the others train on
            return sum(p.sum() * 0 for p in self.parameters())  # type: ignore[return-value]
        x = batch.float().unsqueeze(1) / 1000
        return self.layer(x).pow(2).mean()

    def on_train_batch_end(self, outputs: Any, batch: Any, index: int) -> None:
        # After the callbacks' hook: the commit of this step (if any) has been made.
        stop = self.die_after and self.trainer.global_step == self.die_after
        if stop and self.trainer.is_global_zero:
            os.kill(os.getpid(), signal.SIGKILL)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--run", required=True)
    parser.add_argument("--save-every", type=int, default=3)
    parser.add_argument("--die-after", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()

    handle = vtrain.plugins.get("pytorch").configure()
    name = f"ids-{args.run}-rank-{handle.rank}.jsonl"
    model = Ids(os.path.join(os.environ["RESULTS"], name), args.die_after)
    options = trainer_options(handle=handle, every_n_train_steps=args.save_every)
    ckpt = resume_path(options)
    stream = handle.stream("training", resume=resumed(options), shuffle_seed=5, buffer=16)
    loader = StreamLoader(stream, batch_size=args.batch_size, collate_fn=ids_of)
    trainer = L.Trainer(
        max_epochs=1, enable_progress_bar=False, enable_model_summary=False, **options
    )
    trainer.fit(model, loader, ckpt_path=ckpt)
    print(f"finished at step {trainer.global_step}", flush=True)
    handle.close()


if __name__ == "__main__":
    main()

"""What `configure()` returns: this process's place in the world, and the few helpers it needs."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from vtrain.errors import UsageError
from vtrain.plugins.handle import Handle, Resumed
from vtrain_pytorch.world import World

if TYPE_CHECKING:
    from vtrain.checkpoints import Checkpoint
    from vtrain.checkpoints.payload import PayloadLike
    from vtrain.data import Stream
    from vtrain_pytorch.data import ShareDataset
    from vtrain_pytorch.state import TrainingState


@dataclass(frozen=True)
class TorchHandle(Handle):
    """Rank, world size, device and helpers; `world` is None off the training world.

    `rank` and `world_size` count processes, as torch does (the cluster counts machines).
    Checkpoints hold a model, its optimizer and the step (`save_checkpoint(step, model,
    optimizer)`, `resume(model, optimizer)`); `save_model` writes the weights as model.pt;
    `batches(stream, batch_size=...)` is a DataLoader of a stream.
    """

    world: World | None
    backend: str | None
    """gloo or nccl; None when no process group was made (one process, or not a trainer)."""
    device: Any
    """The torch.device this process should put its model on."""

    model_name: ClassVar[str] = "model.pt"

    @property
    def rank(self) -> int | None:
        """Global rank, or None off the world."""
        return None if self.world is None else self.world.rank

    @property
    def world_size(self) -> int:
        """Number of training processes (0 off the world)."""
        return 0 if self.world is None else self.world.world_size

    @property
    def local_rank(self) -> int | None:
        """Process index on this machine, or None off the world."""
        return None if self.world is None else self.world.local_rank

    def sampler(self, dataset: Any, *, shuffle: bool = True, seed: int = 0) -> Any:
        """A DistributedSampler of `dataset` giving this rank its share (every item in a
        one-process world); `shuffle` and `seed` are the sampler's: call its
        `set_epoch(epoch)` each epoch for a new order."""
        from torch.utils.data import DistributedSampler

        return DistributedSampler(
            dataset,
            num_replicas=max(1, self.world_size),
            rank=self.rank or 0,
            shuffle=shuffle,
            seed=seed,
        )

    def dataset(
        self,
        split: str = "training",
        *,
        format: str | None = None,
        transform: Callable[[Any], Any] | None = None,
        by_record: bool = False,
        check_crc: bool = True,
        uri: str | None = None,
        client: Any = None,
    ) -> ShareDataset:
        """This process's `share` of `split` as an IterableDataset that DataLoader workers split.

        Shared by `rank` among `world_size` processes, as torch counts them (also with
        several processes per machine). Off the world, vtrain.data's placement decides:
        an evaluator reads the validation split whole, anything else reads nothing.
        Records are dicts (JSON Lines, CSV) or bytes (TFRecord), each through `transform`;
        `format` and `check_crc` are `vtrain.data.read_share`'s, and `by_record`, `uri`,
        `client` as `share`. A bad argument raises `UsageError` before any file is listed.
        """
        from vtrain_pytorch.data import ShareDataset, check_options

        # Checked before the files are listed: a typo fails at once, not after a slow listing.
        check_options(format, transform, check_crc)
        share = self.share(split, by_record=by_record, uri=uri, client=client)
        return ShareDataset(
            share, format=format, transform=transform, check_crc=check_crc, environ=self.environ
        )

    def wrap(self, model: Any, **ddp_options: Any) -> Any:
        """`model`, moved to `device`, in DistributedDataParallel when there is a process group.

        `ddp_options` go to DistributedDataParallel (`device_ids` defaults to this
        process's GPU under nccl).
        """
        model = model.to(self.device)
        if self.backend is None:  # no process group: one process, or not a trainer
            return model
        from torch.nn.parallel import DistributedDataParallel

        if self.device.type == "cuda":
            ddp_options.setdefault("device_ids", [self.device.index])
        return DistributedDataParallel(model, **ddp_options)

    def _batches(
        self,
        stream: Stream,
        *,
        batch_size: int,
        transform: Callable[[Any], Any] | None = None,
        **loader_options: Any,
    ) -> Any:
        """A DataLoader of `stream`'s records (each through `transform`), `batch_size` a batch.

        Read in this process (`num_workers=0`): the loader takes exactly a batch at a
        time, so `save_checkpoint(..., data=stream)` after a step holds the position
        after that step's batch. `loader_options` are DataLoader's (`collate_fn`,
        `pin_memory`, `drop_last` …). `StreamDataset(stream)` is the dataset alone. Each
        batch taken marks a step, for the watchdog and the live view, unless the loop
        calls `step()` itself.
        """
        from vtrain_pytorch.data import StreamBatches, StreamDataset

        return StreamBatches(
            StreamDataset(stream, transform=transform),
            batch_size=batch_size,
            num_workers=0,
            **loader_options,
        )

    # -- checkpoints and the model ----------------------------------------------------------
    # `save_checkpoint(step, model, optimizer, data=..., **extra)` and `resume(model,
    # optimizer)` are the core's; a step is a TrainingState (`state.pt`).

    def _write_state(
        self,
        step: int,
        objects: tuple[Any, ...],
        extra: dict[str, Any],
        position: str | None,
        *,
        blocking: bool,
    ) -> PayloadLike:
        model, optimizer = _model_and_optimizer(objects, "save_checkpoint")
        named = sorted({"model", "optimizer"} & set(extra))
        if named:
            # They would be saved as extra values, and the step without an optimizer state.
            raise UsageError(
                "the model and the optimizer go before the keywords",
                source="save_checkpoint",
                value=named,
                expected="save_checkpoint(step, model, optimizer, **extra)",
            )
        return self._state(model, optimizer).payload(step, extra, position, blocking=blocking)

    def _read_state(self, checkpoint: Checkpoint, objects: tuple[Any, ...]) -> Resumed:
        """Load the step into `model` (and `optimizer`): `resume(model, optimizer)`."""
        model, optimizer = _model_and_optimizer(objects, "resume")
        return self._state(model, optimizer).load(checkpoint)

    def _gather_position(self, step: int, data: Any) -> str | None:
        from vtrain_pytorch.positions import gather

        return gather(getattr(data, "dataset", data))  # a DataLoader from `batches`: its stream

    def _agree_preempted(self, here: bool) -> bool:
        """Whether any process got SIGTERM: one all-reduce of a flag, on every process."""
        if self.backend is None:
            return here
        import torch
        import torch.distributed as dist

        flag = torch.tensor([int(here)], device=self.device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return bool(flag.item())

    def _state(self, model: Any, optimizer: Any) -> TrainingState:
        from vtrain_pytorch.state import TrainingState

        # The handle's one manager: a save waits for the last, and close() for the lot.
        return TrainingState(model, optimizer, manager=self.checkpoints)

    def write_model(self, model: Any, folder: str, name: str) -> str:
        """The model's weights (`state_dict`, unwrapped from DDP) as `name` in `folder`."""
        import torch

        torch.save(getattr(model, "module", model).state_dict(), os.path.join(folder, name))
        return name

    # -- together, and the end --------------------------------------------------------------

    def barrier(self) -> None:
        """Wait for every process of the world (a no-op alone)."""
        if self.backend is not None:
            import torch.distributed as dist

            dist.barrier()

    def _release(self, ok: bool) -> None:
        """Destroy the process group this process made."""
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()


def _model_and_optimizer(objects: tuple[Any, ...], word: str) -> tuple[Any, Any]:
    if not 1 <= len(objects) <= 2:
        raise UsageError(
            f"takes a model and an optimizer, got {len(objects)} objects",
            source=word,
            value=len(objects),
            expected=f"{word}(..., model) or {word}(..., model, optimizer)",
        )
    return objects[0], objects[1] if len(objects) == 2 else None

"""What `configure()` returns: this process's place in the world, and the few helpers it needs."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from vtrain.plugins.handle import Handle, Resumed
from vtrain_pytorch.world import World

if TYPE_CHECKING:
    from vtrain_pytorch.data import ShareDataset
    from vtrain_pytorch.positions import Positioned
    from vtrain_pytorch.state import TrainingState


@dataclass(frozen=True)
class TorchHandle(Handle):
    """Rank, world size, device and helpers; `world` is None off the training world.

    `rank` and `world_size` count processes, as torch does (the cluster counts machines).
    Checkpoints hold a model, its optimizer and the step (`save_checkpoint`, `resume`);
    `save_model` writes the weights as model.pt.
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

    @property
    def distributed(self) -> bool:
        """True when a process group is initialised."""
        return self.backend is not None

    def sampler(self, dataset: Any, *, shuffle: bool = True, seed: int = 0) -> Any:
        """A DistributedSampler giving this rank its share (every item in a one-process world)."""
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
        `by_record`, `uri`, `client`: as `share`.
        """
        from vtrain_pytorch.data import ShareDataset, check_options

        # Checked before the files are listed: a typo fails at once, not after a slow listing.
        check_options(format, transform, check_crc)
        share = self.share(split, by_record=by_record, uri=uri, client=client)
        return ShareDataset(
            share, format=format, transform=transform, check_crc=check_crc, environ=self.environ
        )

    def wrap(self, model: Any, **ddp_options: Any) -> Any:
        """The model, moved to `device`, in DistributedDataParallel when distributed."""
        model = model.to(self.device)
        if not self.distributed:
            return model
        from torch.nn.parallel import DistributedDataParallel

        if self.device.type == "cuda":
            ddp_options.setdefault("device_ids", [self.device.index])
        return DistributedDataParallel(model, **ddp_options)

    # -- checkpoints and the model ----------------------------------------------------------

    def resume(self, model: Any, optimizer: Any = None) -> Resumed:
        """Load the newest committed step of `checkpoints` into `model` (and `optimizer`).

        Every replica loads the same step. `done` is the step (continue from
        there), `uri` its folder, `extra` what `save_checkpoint` saved beside it;
        a fresh start is falsy, with `done` 0 and the model untouched.
        """
        return self._state(model, optimizer).resume()

    def save_checkpoint(
        self,
        step: int,
        model: Any,
        optimizer: Any = None,
        *,
        blocking: bool = False,
        data: Positioned | None = None,
        **extra: Any,
    ) -> str | None:
        """Commit `step` of `model`, `optimizer` and `extra` from the leader; its folder, else None.

        The state is copied to CPU memory and committed in the background unless
        `blocking`; the next save and `close()` wait for it. With `data` (the
        stream trained on) every process's position is committed too, so every
        process must call it at the same step.
        """
        return self._state(model, optimizer).save(step, blocking=blocking, data=data, **extra)

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
        if self.distributed:
            import torch.distributed as dist

            dist.barrier()

    def close(self) -> None:
        """Commit a pending background save, then destroy the process group this process made."""
        import torch.distributed as dist

        from vtrain_pytorch.state import release_preemption

        release_preemption()  # no save is coming: SIGTERM stops the process at once again
        try:
            if "checkpoints" in self.__dict__:  # made when first used; nothing to wait for else
                self.checkpoints.close()
        finally:
            if dist.is_available() and dist.is_initialized():
                dist.destroy_process_group()

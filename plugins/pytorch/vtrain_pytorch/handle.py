"""What `configure()` returns: this process's place in the world, and the few helpers it needs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vtrain.plugins.base import Handle
from vtrain_pytorch.world import World

if TYPE_CHECKING:
    from vtrain_pytorch.data import ShareDataset


@dataclass(frozen=True)
class TorchHandle(Handle):
    """Rank, world size, device and helpers; `world` is None off the training world.

    `rank` and `world_size` count processes, as torch does (the cluster counts machines).
    """

    world: World | None
    backend: str | None
    """gloo or nccl; None when no process group was made (one process, or not a trainer)."""
    device: Any
    """The torch.device this process should put its model on."""

    @property
    def in_world(self) -> bool:
        """True on the chief and the workers; ps, evaluators and reducers take no rank."""
        return self.world is not None

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
        environ: Mapping[str, str] | None = None,
        gcs_mount: str | None = None,
        fuse: bool | None = None,
    ) -> ShareDataset:
        """This process's share of `split` as an IterableDataset that DataLoader workers split.

        Shared by `rank` among `world_size` processes, as torch counts them (also with
        several processes per machine). Off the world, vtrain.data's placement decides:
        an evaluator reads the validation split whole, anything else reads nothing.
        """
        from vtrain.data import files
        from vtrain_pytorch.data import ShareDataset, check_options

        # Checked before the files are listed: a typo fails at once, not after a slow listing.
        check_options(format, transform, check_crc)
        place = {} if self.world is None else {"rank": self.rank, "world_size": self.world_size}
        share = files(
            split,
            by_record=by_record,
            uri=uri,
            environ=environ,
            gcs_mount=gcs_mount,
            fuse=fuse,
            **place,
        )
        return ShareDataset(
            share, format=format, transform=transform, check_crc=check_crc, environ=environ
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

    def save_model(self, model: Any, name: str = "model.pt") -> str | None:
        """Write the model's weights to AIP_MODEL_DIR from the leader; return where, else None.

        Written to a local file first, then put in place through vtrain's storage, so a
        gs:// model directory works with or without the /gcs/ mount.
        """
        if not self.is_leader:
            return None
        import tempfile

        import torch

        from vtrain import RunContext
        from vtrain.storage import open_location

        target = open_location(RunContext.from_env().model_dir)
        target.makedirs()
        with tempfile.TemporaryDirectory(prefix="vtrain-model-") as scratch:
            local = f"{scratch}/{name}"
            torch.save(getattr(model, "module", model).state_dict(), local)
            target.upload(local, name)
        return target.join(name).uri

    def barrier(self) -> None:
        """Wait for every process of the world (a no-op alone)."""
        if self.distributed:
            import torch.distributed as dist

            dist.barrier()

    def close(self) -> None:
        """Destroy the process group, if this process made one."""
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()

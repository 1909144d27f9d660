"""A Lightning `ClusterEnvironment` read from vtrain's ClusterInfo.

Lightning detects SLURM, TorchElastic, Kubeflow and LSF, but not Vertex AI or
AI Platform; left to its default environment it gives every replica global
rank 0. Pass this one in `Trainer(plugins=[...])`, or let `trainer_options` do it.
"""

from __future__ import annotations

import os

from lightning.fabric.plugins.environments import ClusterEnvironment

from vtrain import ClusterInfo, ConfigError, UsageError
from vtrain_pytorch.world import World


class VtrainEnvironment(ClusterEnvironment):  # type: ignore[misc]
    """Ranks, addresses and sizes as the platform (or `vtrain local run`) gave them."""

    def __init__(self, world: World | None = None, *, nproc_per_node: int | None = None) -> None:
        super().__init__()
        self._world = world or World.from_cluster(
            ClusterInfo.from_env(), nproc_per_node=nproc_per_node, environ=os.environ
        )
        self._world_size = self._world.world_size
        self._global_rank = self._world.rank

    @property
    def world(self) -> World:
        """The coordinates this environment reports."""
        return self._world

    @property
    def creates_processes_externally(self) -> bool:
        """True: the platform, `vtrain local run` or torchrun start every process, not Lightning."""
        return True

    @property
    def main_address(self) -> str:
        """The chief's host."""
        return self._world.master_addr

    @property
    def main_port(self) -> int:
        """The chief's port."""
        return self._world.master_port

    @staticmethod
    def detect() -> bool:
        """True where CLUSTER_SPEC or TF_CONFIG describes the cluster (Vertex, AI Platform)."""
        try:
            return ClusterInfo.from_env().source in ("cluster_spec", "tf_config")
        except ConfigError:
            return False

    def world_size(self) -> int:
        """Processes across all machines."""
        return self._world_size

    def set_world_size(self, size: int) -> None:
        """Lightning tells the environment the size it computed; it must agree."""
        self._world_size = size

    def global_rank(self) -> int:
        """This process's rank across all machines."""
        return self._global_rank

    def set_global_rank(self, rank: int) -> None:
        """Lightning tells the environment the rank it computed; it must agree."""
        self._global_rank = rank

    def local_rank(self) -> int:
        """This process's index on its machine."""
        return self._world.local_rank

    def node_rank(self) -> int:
        """This machine's index."""
        return self._world.node_rank

    def validate_settings(self, num_devices: int, num_nodes: int) -> None:
        """Refuse a Trainer whose devices x nodes does not match the cluster."""
        if (num_devices, num_nodes) != (self._world.local_world_size, self._world.num_nodes):
            raise UsageError(
                f"Trainer(devices={num_devices}, num_nodes={num_nodes}) does not match the cluster",
                source="Trainer",
                value={"devices": num_devices, "num_nodes": num_nodes},
                expected=f"devices={self._world.local_world_size}, "
                f"num_nodes={self._world.num_nodes}",
                hint="pass **vtrain_pytorch.lightning.trainer_options() to Trainer",
            )

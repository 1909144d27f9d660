"""`ClusterInfo`: who this replica is, in one frozen value, whatever platform said so."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from types import MappingProxyType

from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, REDUCTION_SERVER, ROLES, WORKER
from vtrain.frozen import Frozen

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

Cluster = Mapping[str, tuple[str | None, ...]]


class ClusterInfo(Frozen):
    """This replica's place in its cluster.

    `cluster` maps each normalized role (chief, worker, ps, evaluator,
    reduction_server) to its replicas' ``host:port`` addresses, in index order.
    An address is None where the launcher tells how many replicas there are but
    not where they live (torchrun, Kubeflow PyTorchJob). Build one with
    `from_env` or `from_json`; never with logic of your own.
    """

    __slots__ = (
        "cluster",
        "role",
        "index",
        "source",
        "platform",
        "role_names",
        "trial_id",
        "job",
        "local_rank",
        "local_world_size",
        "node_rank",
        "process_rank",
        "process_count",
        "sparse",
    )
    cluster: Cluster
    role: str
    """This replica's normalized role: chief, worker, ps, evaluator or reduction_server."""
    index: int
    """This replica's index among the replicas of its role."""
    source: str
    """The reader that gave it: cluster_spec, tf_config, torchrun, torch_env or single.

    The same names VTRAIN_CLUSTER_SOURCE takes to force one.
    """
    platform: str | None
    """Who wrote the variables, where the source tells: vertex, aiplatform, kubeflow, else None."""
    role_names: Mapping[str, str]
    """Normalized role -> the source's own name for it (chief -> "master", "workerpool0" …)."""
    trial_id: str | None
    """The hyperparameter tuning trial this replica runs (``task.trial``); None outside tuning."""
    job: Mapping[str, Any] | None
    """The source document's ``job`` object (the job's spec, on Vertex), as given; None without."""
    local_rank: int | None
    """Process index on this machine, where a process launcher (torchrun) set it."""
    local_world_size: int | None
    """Processes per machine, where the launcher said (torchrun, Kubeflow PET_NPROC_PER_NODE)."""
    node_rank: int | None
    """This machine's index, where a process launcher set it (torchrun's GROUP_RANK)."""
    process_rank: int | None
    """This process's rank among all processes, where a per-process launcher set it.

    torchrun's RANK: under `--virtual-local-rank` every LOCAL_RANK is 0, and with the
    c10d rendezvous GROUP_RANK need not follow the platform's replica order, so no
    rank computed from the machine's place is safe; torchrun's own RANK is.
    """
    process_count: int | None
    """All processes of the job (torchrun's WORLD_SIZE), where a per-process launcher set it."""
    sparse: bool
    """True when the source lists only some tasks (Kubeflow's sparse TF_CONFIG).

    The listed tasks keep their indexes (the gaps are None), and only they count, as
    TensorFlow counts them: a dynamic worker that sees only itself cannot know how many
    others there are, and any count it guessed would differ from its neighbours'.
    """

    def __init__(
        self,
        cluster: Cluster,
        role: str,
        index: int,
        source: str,
        platform: str | None = None,
        role_names: Mapping[str, str] | None = None,
        trial_id: str | None = None,
        job: Mapping[str, Any] | None = None,
        local_rank: int | None = None,
        local_world_size: int | None = None,
        node_rank: int | None = None,
        process_rank: int | None = None,
        process_count: int | None = None,
        sparse: bool = False,
    ) -> None:
        # The containers are frozen too: a frozen value holding a mutable dict is not frozen.
        cluster = MappingProxyType({r: tuple(cluster[r]) for r in ROLES if r in cluster})
        role_names = MappingProxyType(dict(role_names or {}))
        job = None if job is None else MappingProxyType(dict(job))
        self._init_from(locals())

    # -- constructors ------------------------------------------------------------------

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ClusterInfo:
        """Read this replica's cluster from `environ` (default `os.environ`).

        Raises `ConfigError` for a malformed variable, and `ConflictError` when two
        sources (CLUSTER_SPEC and TF_CONFIG) describe this replica differently.
        """
        from vtrain.cluster.detect import detect

        return detect(os.environ if environ is None else environ, cls)

    @classmethod
    def from_json(cls, text: str | bytes, *, variable: str = "CLUSTER_SPEC") -> ClusterInfo:
        """Parse `text`, one document: a CLUSTER_SPEC or a TF_CONFIG, as named by `variable`.

        A malformed document raises `ConfigError`, another `variable` `UsageError`.
        """
        from vtrain.cluster.detect import from_document

        return from_document(variable, text, cls)

    @classmethod
    def single(cls) -> ClusterInfo:
        """A cluster of one: this process is the chief, rank 0."""
        from vtrain.cluster.detect import single

        return cls(**single())

    # -- derived -------------------------------------------------------------------------

    @property
    def source_role(self) -> str:
        """This replica's role as the source named it (e.g. "master", "workerpool1")."""
        return self.role_names.get(self.role, self.role)

    @property
    def trainers(self) -> tuple[str | None, ...]:
        """Addresses of the replicas that train, in rank order: the chief, then the workers."""
        return self.cluster.get(CHIEF, ()) + self.cluster.get(WORKER, ())

    @property
    def num_trainers(self) -> int:
        """How many replicas train (chief + workers); ps, evaluators and reducers do not.

        In a sparse cluster, only the listed trainers (see `sparse`).
        """
        if self.sparse:
            return sum(a is not None for a in self.trainers)
        return len(self.trainers)

    @property
    def rank(self) -> int | None:
        """Rank among trainers (chief 0, worker i -> i+1); None for ps, evaluator, reducer.

        Without a chief (a TF_CONFIG of workers only) worker i has rank i: worker 0
        then leads, as TensorFlow's strategies treat it.
        """
        if self.role == CHIEF:
            return self.index
        if self.role == WORKER:
            return len(self.cluster.get(CHIEF, ())) + self.index
        return None

    @property
    def is_chief(self) -> bool:
        """True on the one process that leads: the chief (or worker 0 when there is none).

        Under torchrun, torchrun's RANK 0 is the one chief process, wherever its
        rendezvous placed it. Otherwise `rank` is the machine's, and only its local
        process 0 leads, or every process on the chief's machine would write. An
        evaluator is never the chief (TensorFlow calls it a chief of its own; here
        the chief is the one replica that writes for the whole job).
        """
        if self.process_rank is not None:
            return self.process_rank == 0
        return self.rank == 0 and not self.local_rank

    @property
    def is_distributed(self) -> bool:
        """True when more than one replica exists, in any role (listed ones, when sparse)."""
        if self.sparse:
            listed = sum(a is not None for replicas in self.cluster.values() for a in replicas)
            return listed > 1 or self.role not in self.cluster
        return sum(len(a) for a in self.cluster.values()) > 1 or self.role not in self.cluster

    @property
    def chief_address(self) -> str | None:
        """``host:port`` of the leading trainer, or None when no address is known."""
        trainers = self.trainers
        return trainers[0] if trainers else None

    @property
    def is_trainer(self) -> bool:
        """True for the chief and the workers."""
        return self.rank is not None

    @property
    def address(self) -> str | None:
        """This replica's own ``host:port``, when the source gave it."""
        replicas = self.cluster.get(self.role, ())
        return replicas[self.index] if self.index < len(replicas) else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: what `vtrain info --json` prints about the cluster."""
        return {
            "source": self.source,
            "platform": self.platform,
            "role": self.role,
            "source_role": self.source_role,
            "index": self.index,
            "rank": self.rank,
            "num_trainers": self.num_trainers,
            "is_chief": self.is_chief,
            "is_distributed": self.is_distributed,
            "chief_address": self.chief_address,
            "address": self.address,
            "cluster": {r: list(a) for r, a in self.cluster.items()},
            "trial_id": self.trial_id,
            "local_rank": self.local_rank,
            "local_world_size": self.local_world_size,
            "node_rank": self.node_rank,
            "process_rank": self.process_rank,
            "process_count": self.process_count,
            "sparse": self.sparse,
        }

    def __str__(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


__all__ = ["CHIEF", "EVALUATOR", "PS", "REDUCTION_SERVER", "WORKER", "ClusterInfo"]

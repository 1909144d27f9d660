"""Which description of the cluster to trust, in which order, and what to do when two disagree."""

from __future__ import annotations

from collections.abc import Mapping

from vtrain.cluster import (
    cluster_spec_reader,
    fields,
    tf_config_reader,
    torch_env_reader,
    torchrun_reader,
    trainjob_reader,
)
from vtrain.cluster.roles import CHIEF, PS, REDUCTION_SERVER
from vtrain.errors import ConfigError, ConflictError, UsageError
from vtrain.variables import check_trial_id

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol, TypeVar

    V = TypeVar("V", bound="Described")

    class Described(Protocol):
        """What detection reads of the value it makes (a ClusterInfo, which calls it): named
        here, so that the readers and their order do not depend on the value's module."""

        @property
        def source(self) -> str: ...
        @property
        def source_role(self) -> str: ...
        @property
        def role(self) -> str: ...
        @property
        def index(self) -> int: ...
        @property
        def trial_id(self) -> str | None: ...
        @property
        def rank(self) -> int | None: ...
        @property
        def num_trainers(self) -> int: ...
        def replace(self: V, **changes: Any) -> V: ...

    class Source(Protocol):
        """What each reader module holds: its name, a test, and the reader."""

        NAME: str

        def present(self, environ: Mapping[str, str]) -> bool: ...

        def read(self, environ: Mapping[str, str]) -> dict[str, Any]: ...


# The order is the point of this module. Earlier sources are more complete and
# more specific to the platform; a later one is read only when no earlier one is set.
#  1. CLUSTER_SPEC: Vertex and AI Platform write it on every replica, single ones too,
#     with every pool, the job spec and the trial; it alone tells a Reduction Server
#     from a parameter server.
#  2. TF_CONFIG: complete for TensorFlow's roles, but Vertex writes it only for
#     distributed jobs and leaves the evaluator out; Kubeflow TFJob and
#     `gcloud ai-platform local train` write nothing else.
#  3. torchrun: exact per-process ranks, marked by TORCHELASTIC_RUN_ID.
#  4. env:// variables (RANK, WORLD_SIZE, MASTER_ADDR): Kubeflow PyTorchJob and
#     XGBoostJob, or set by hand; counts and ranks, but not every address.
#  5. A Kubeflow Trainer v2 node (TrainJob): vtrain's layout, the XGBoost runtime's DMLC_*,
#     or the torch runtime's PET_* alone (a node whose command is not torchrun).
#  6. Nothing: one process, the chief. KUBERNETES_* alone never means Kubeflow.
SOURCES: tuple[Source, ...] = (
    cluster_spec_reader,
    tf_config_reader,
    torchrun_reader,
    torch_env_reader,
    trainjob_reader,
)

# Set to one of the names above (or "single") to read that source and ignore the rest,
# e.g. when a stale TF_CONFIG from an old shell disagrees with CLUSTER_SPEC.
OVERRIDE = "VTRAIN_CLUSTER_SOURCE"

# The sources that are one JSON document, by name: errors name the variable.
DOCUMENTS = {r.NAME: r.VARIABLE for r in (cluster_spec_reader, tf_config_reader)}


def single() -> dict[str, Any]:
    """The fields of a cluster of one: this process is the chief, rank 0."""
    return {"cluster": {CHIEF: (None,)}, "role": CHIEF, "index": 0, "source": "single"}


def detect(environ: Mapping[str, str], make: Callable[..., V]) -> V:
    """The cluster described by the first source that is set, cross-checked with the others.

    `make` makes the value from its fields (ClusterInfo, whose `from_env` calls this): the
    readers give checked fields, and the value is made here.
    """
    forced = environ.get(OVERRIDE, "").strip()
    names = [*(s.NAME for s in SOURCES), "single"]
    if forced and forced not in names:
        raise UsageError(
            "unknown source",
            source=OVERRIDE,
            value=forced,
            expected="one of " + ", ".join(repr(n) for n in names),
        )
    info = None
    for source in SOURCES:
        if forced == source.NAME and not source.present(environ):
            raise ConfigError(
                f"asks for the {source.NAME} source, but it describes no cluster here",
                source=OVERRIDE,
                value=forced,
                hint="set that source's variables, or unset " + OVERRIDE,
            )
        if source.present(environ) and (not forced or forced == source.NAME):
            info = make(**source.read(environ))
            break
    if info is None:
        info = make(**single())
    if not forced:
        _cross_check(info, environ, make)
    return _with_process_and_trial(info, environ)


def from_document(variable: str, text: str | bytes, make: Callable[..., V]) -> V:
    """Parse one CLUSTER_SPEC or TF_CONFIG document, named by `variable`."""
    readers = {"CLUSTER_SPEC": cluster_spec_reader.parse, "TF_CONFIG": tf_config_reader.parse}
    if variable not in readers:
        raise UsageError(
            "unknown document kind",
            source="variable",
            value=variable,
            expected="CLUSTER_SPEC or TF_CONFIG",
        )
    return make(**readers[variable](text))


def _same_task(info: Described) -> tuple[str, int]:
    # Vertex's TF_CONFIG names a Reduction Server replica "ps"; that is no disagreement.
    return (PS if info.role == REDUCTION_SERVER else info.role, info.index)


def _cross_check(info: V, environ: Mapping[str, str], make: Callable[..., V]) -> None:
    """Refuse to pick a side silently when two sources describe this replica differently."""
    if info.source == cluster_spec_reader.NAME and tf_config_reader.present(environ):
        other = make(**tf_config_reader.read(environ))
        if _same_task(other) != _same_task(info) or (
            other.trial_id and info.trial_id and other.trial_id != info.trial_id
        ):
            raise ConflictError(
                f"CLUSTER_SPEC says this replica is {info.source_role}[{info.index}] "
                f"(trial {info.trial_id}), TF_CONFIG says {other.source_role}[{other.index}] "
                f"(trial {other.trial_id})",
                source="CLUSTER_SPEC/TF_CONFIG",
                hint=f"unset the stale one, or set {OVERRIDE}={cluster_spec_reader.NAME} "
                f"or ={tf_config_reader.NAME}",
            )
    # Vertex also sets RANK/WORLD_SIZE for PyTorch, counted in machines: WORLD_SIZE is
    # `num_trainers`. Under torchrun they are per process (LOCAL_RANK is then set), and
    # the two legitimately differ.
    if info.source in DOCUMENTS and info.rank is not None:
        if environ.get("LOCAL_RANK") or torchrun_reader.present(environ):
            return
        for name, mine, says in (
            ("RANK", info.rank, f"gives this replica rank {info.rank}"),
            ("WORLD_SIZE", info.num_trainers, f"has {info.num_trainers} trainers"),
        ):
            given = environ.get(name, "").strip(fields.BLANKS)
            if given and fields.natural(given) != mine:  # RANK=01 is rank 1
                raise ConflictError(
                    f"{name}={given}, but {DOCUMENTS[info.source]} {says}",
                    source=name,
                    value=given,
                    hint=f"unset {name}, or set {OVERRIDE}={torch_env_reader.NAME} "
                    "to trust it instead",
                )


def _with_process_and_trial(info: V, environ: Mapping[str, str]) -> V:
    changes: dict[str, object] = {}
    if info.source != torchrun_reader.NAME and torchrun_reader.present(environ):
        # torchrun inside a Vertex replica: the cluster is the platform's, the
        # per-process facts are torchrun's.
        changes.update(torchrun_reader.process_fields(environ))
    env_trial = check_trial_id(environ.get("CLOUD_ML_TRIAL_ID", ""), "CLOUD_ML_TRIAL_ID")
    if info.trial_id is None and env_trial is not None:
        changes["trial_id"] = env_trial
    elif info.trial_id and env_trial and info.trial_id != env_trial:
        raise ConflictError(
            f"CLOUD_ML_TRIAL_ID={env_trial}, but {DOCUMENTS.get(info.source, info.source)} "
            f"says trial {info.trial_id}",
            source="CLOUD_ML_TRIAL_ID",
            value=env_trial,
        )
    return info.replace(**changes) if changes else info

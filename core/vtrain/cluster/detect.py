"""Which description of the cluster to trust, in which order, and what to do when two disagree."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from vtrain.cluster import torchrun
from vtrain.cluster.cluster_spec import read_cluster_spec
from vtrain.cluster.info import ClusterInfo
from vtrain.cluster.roles import PS, REDUCTION_SERVER
from vtrain.cluster.tf_config import describes_cluster as tf_config_describes
from vtrain.cluster.tf_config import read_tf_config
from vtrain.cluster.torch_env import describes_cluster as torch_env_describes
from vtrain.cluster.torch_env import read_torch_env
from vtrain.context import check_trial_id
from vtrain.errors import ConfigError, ConflictError, UsageError

Reader = Callable[[Mapping[str, str]], ClusterInfo]

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
#  5. Nothing: one process, the chief. KUBERNETES_* alone never means Kubeflow.
SOURCES: tuple[tuple[str, Callable[[Mapping[str, str]], bool], Reader], ...] = (
    ("cluster_spec", lambda env: bool(env.get("CLUSTER_SPEC")),
     lambda env: read_cluster_spec(env["CLUSTER_SPEC"])),
    ("tf_config", lambda env: bool(env.get("TF_CONFIG")) and tf_config_describes(env["TF_CONFIG"]),
     lambda env: read_tf_config(env["TF_CONFIG"])),
    ("torchrun", torchrun.describes_cluster, torchrun.read_torchrun),
    ("torch_env", torch_env_describes, read_torch_env),
)  # fmt: skip

# Set to one of the names above (or "single") to read that source and ignore the rest,
# e.g. when a stale TF_CONFIG from an old shell disagrees with CLUSTER_SPEC.
OVERRIDE = "VTRAIN_CLUSTER_SOURCE"


def detect(environ: Mapping[str, str]) -> ClusterInfo:
    """The cluster described by the first source that is set, cross-checked with the others."""
    forced = environ.get(OVERRIDE, "").strip()
    names = [name for name, _, _ in SOURCES]
    if forced and forced not in (*names, "single"):
        raise UsageError(
            "unknown source",
            source=OVERRIDE,
            value=forced,
            expected="one of " + ", ".join(repr(n) for n in (*names, "single")),
        )
    info = None
    for name, present, read in SOURCES:
        if name == forced and not present(environ):
            raise ConfigError(
                f"asks for the {name} source, but it describes no cluster here",
                source=OVERRIDE,
                value=forced,
                hint="set that source's variables, or unset " + OVERRIDE,
            )
        if present(environ) and (name == forced or not forced):
            info = read(environ)
            break
    if info is None:
        info = ClusterInfo.single()
    if not forced:
        _cross_check(info, environ)
    return _with_process_and_trial(info, environ)


def from_document(variable: str, text: str | bytes) -> ClusterInfo:
    """Parse one CLUSTER_SPEC or TF_CONFIG document, named by `variable`."""
    readers = {"CLUSTER_SPEC": read_cluster_spec, "TF_CONFIG": read_tf_config}
    if variable not in readers:
        raise UsageError(
            "unknown document kind",
            source="variable",
            value=variable,
            expected="CLUSTER_SPEC or TF_CONFIG",
        )
    return readers[variable](text)


def _same_task(info: ClusterInfo) -> tuple[str, int]:
    # Vertex's TF_CONFIG names a Reduction Server replica "ps"; that is no disagreement.
    return (PS if info.role == REDUCTION_SERVER else info.role, info.index)


def _cross_check(info: ClusterInfo, environ: Mapping[str, str]) -> None:
    """Refuse to pick a side silently when two sources describe this replica differently."""
    tf_config = environ.get("TF_CONFIG", "")
    if info.source in ("vertex", "aiplatform") and tf_config and tf_config_describes(tf_config):
        other = read_tf_config(tf_config)
        if _same_task(other) != _same_task(info) or (
            other.trial_id and info.trial_id and other.trial_id != info.trial_id
        ):
            raise ConflictError(
                f"CLUSTER_SPEC says this replica is {info.source_role}[{info.index}] "
                f"(trial {info.trial_id}), TF_CONFIG says {other.source_role}[{other.index}] "
                f"(trial {other.trial_id})",
                source="CLUSTER_SPEC/TF_CONFIG",
                hint=f"unset the stale one, or set {OVERRIDE}=cluster_spec or =tf_config",
            )
    # Vertex also sets machine-level RANK/WORLD_SIZE for PyTorch; under torchrun they are
    # per process (LOCAL_RANK is then set), and the two legitimately differ.
    if info.source in ("vertex", "aiplatform", "tf_config") and info.rank is not None:
        if environ.get("LOCAL_RANK") or torchrun.describes_cluster(environ):
            return
        for name, mine in (("RANK", info.rank), ("WORLD_SIZE", info.world_size)):
            given = environ.get(name, "").strip()
            if given and given != str(mine):
                raise ConflictError(
                    f"{name}={given}, but {info.source} gives this replica {name.lower()} {mine}",
                    source=name,
                    value=given,
                    hint=f"unset {name}, or set {OVERRIDE}=torch_env to trust it instead",
                )


def _with_process_and_trial(info: ClusterInfo, environ: Mapping[str, str]) -> ClusterInfo:
    changes: dict[str, object] = {}
    if info.source != "torchrun" and torchrun.describes_cluster(environ):
        # torchrun inside a Vertex replica: the cluster is the platform's, the
        # per-process facts are torchrun's.
        changes.update(torchrun.process_fields(environ))
    env_trial = check_trial_id(environ.get("CLOUD_ML_TRIAL_ID", ""), "CLOUD_ML_TRIAL_ID")
    if info.trial_id is None and env_trial is not None:
        changes["trial_id"] = env_trial
    elif info.trial_id and env_trial and info.trial_id != env_trial:
        raise ConflictError(
            f"CLOUD_ML_TRIAL_ID={env_trial}, but {info.source} says trial {info.trial_id}",
            source="CLOUD_ML_TRIAL_ID",
            value=env_trial,
        )
    return info.replace(**changes) if changes else info

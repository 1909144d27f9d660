"""What a `vtrain submit` command line asks for, as given, before anything is checked.

`JobOptions.from_options` gathers its keyword arguments here, so that the shared
checks and each engine's rules read one typed value. Per-role settings are
mappings from a role (chief, worker, ps, evaluator) to the flag's text; a role
that is absent falls back to the chief's setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from vtrain.submit.values import split_command


@dataclass(frozen=True)
class JobRequest:
    """The options of one job, each as its flag gave it."""

    platform: str
    argv: tuple[str, ...] = ()
    name: str | None = None
    workers: int = 0
    ps: int = 0
    evaluators: int = 0
    image: str | None = None
    machine_type: str | None = None
    accelerator: str | None = None
    role_images: Mapping[str, str] = field(default_factory=dict)
    """Worker, ps and evaluator images (--worker-image ...); the chief's is `image`."""
    role_machine_types: Mapping[str, str] = field(default_factory=dict)
    role_accelerators: Mapping[str, str] = field(default_factory=dict)
    reduction_servers: int = 0
    reduction_server_machine_type: str | None = None
    region: str | None = None
    project: str | None = None
    output_dir: str | None = None
    service_account: str | None = None
    network: str | None = None
    timeout: str | None = None
    restart_job: bool = False
    spot: bool = False
    flex_start: bool = False
    max_wait: str | None = None
    """How long a --flex-start job waits for its machines."""
    env: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    study: str | None = None
    """The study file's path."""
    use_chief: bool = True
    flags_only: bool = False
    framework: str | None = None
    trainjob: str | None = None
    """The runtime of a Kubeflow Trainer v2 TrainJob."""
    namespace: str | None = None
    python_package: str | None = None
    python_module: str | None = None
    executor_image: str | None = None
    staging: str | None = None
    experiment: str | None = None
    """Vertex AI Experiments: the job's experiment, its run, and a TensorBoard instance."""
    experiment_run: str | None = None
    tensorboard: str | None = None

    @property
    def command(self) -> tuple[str, ...]:
        """The COMMAND after ``--`` (empty: the image's ENTRYPOINT runs)."""
        return split_command(self.argv)[0]

    @property
    def args(self) -> tuple[str, ...]:
        """The arguments after ``--`` COMMAND."""
        return split_command(self.argv)[1]

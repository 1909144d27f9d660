"""`RunContext`: where this job writes, what it reads, and which job and trial it is.

Vertex sets `AIP_MODEL_DIR`, `AIP_CHECKPOINT_DIR` and `AIP_TENSORBOARD_LOG_DIR`
from the job's `baseOutputDirectory` (`<base>/model/`, or `<base>/<trial>/model/`
under tuning). When they are unset vtrain lays out the same tree under a local
base folder, so a script that runs alone writes where it would on the platform.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from vtrain.errors import ConfigError, VtrainError, raise_all
from vtrain.frozen import Frozen

DEFAULT_METRIC_FILE = "/tmp/hypertune/output.metrics"
DEFAULT_METRIC_TAG = "training/hptuning/metric"
DEFAULT_OUTPUT_DIR = "vtrain-output"
DATA_FORMATS = ("jsonl", "csv", "bigquery")

# Trial and job ids become folder names; anything that could climb out of the base is refused.
_FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_folder_name(value: str, variable: str, what: str, example: str) -> str | None:
    """An id that is safe as one path component, or None when it is empty."""
    if value == "":
        return None
    if not _FOLDER_NAME.fullmatch(value) or ".." in value:
        raise ConfigError(
            f"{what} is not a plain folder name",
            source=variable,
            value=value,
            expected=f"letters, digits, '.', '_' or '-' ({example})",
        )
    return value


def check_trial_id(value: str, variable: str) -> str | None:
    """A trial id that is safe as one path component, or None when it is empty."""
    return check_folder_name(value, variable, "trial id", "Vertex uses 1, 2, 3 …")


class RunContext(Frozen):
    """The job-level facts every replica shares: directories, data, ids, the metric file."""

    __slots__ = (
        "model_dir",
        "checkpoint_dir",
        "tensorboard_dir",
        "base_output_dir",
        "trial_id",
        "training_data_uri",
        "validation_data_uri",
        "test_data_uri",
        "data_format",
        "project_number",
        "job_id",
        "region",
        "metric_file",
        "metric_tag",
    )
    model_dir: str
    checkpoint_dir: str
    tensorboard_dir: str
    base_output_dir: str | None
    """The local base the directories default to; None when the platform set them all."""
    trial_id: str | None
    training_data_uri: str | None
    validation_data_uri: str | None
    test_data_uri: str | None
    data_format: str | None
    project_number: str | None
    job_id: str | None
    region: str | None
    metric_file: str
    metric_tag: str

    def __init__(
        self,
        *,
        model_dir: str,
        checkpoint_dir: str,
        tensorboard_dir: str,
        base_output_dir: str | None,
        trial_id: str | None = None,
        training_data_uri: str | None = None,
        validation_data_uri: str | None = None,
        test_data_uri: str | None = None,
        data_format: str | None = None,
        project_number: str | None = None,
        job_id: str | None = None,
        region: str | None = None,
        metric_file: str = DEFAULT_METRIC_FILE,
        metric_tag: str = DEFAULT_METRIC_TAG,
    ) -> None:
        self._init_from(locals())

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, trial_id: str | None = None
    ) -> RunContext:
        """Read the run context; `trial_id` (e.g. from CLUSTER_SPEC) beats CLOUD_ML_TRIAL_ID."""
        env = os.environ if environ is None else environ
        errors: list[VtrainError] = []

        def get(name: str) -> str | None:
            value = env.get(name)
            return value if value else None

        try:
            if trial_id is None:
                trial_id = check_trial_id(env.get("CLOUD_ML_TRIAL_ID", ""), "CLOUD_ML_TRIAL_ID")
            else:  # it becomes a folder name as well, wherever it came from
                trial_id = check_trial_id(trial_id, "trial_id")
        except VtrainError as e:
            errors.append(e)

        data_format = get("AIP_DATA_FORMAT")
        if data_format is not None and data_format not in DATA_FORMATS:
            errors.append(
                ConfigError(
                    "unknown data format",
                    source="AIP_DATA_FORMAT",
                    value=data_format,
                    expected=" or ".join(DATA_FORMATS),
                )
            )
        project = get("CLOUD_ML_PROJECT_ID")
        if project is not None and not project.isdigit():
            errors.append(
                ConfigError(
                    "not a project number",
                    source="CLOUD_ML_PROJECT_ID",
                    value=project,
                    expected="digits only",
                    hint="Vertex sets the project number here, not the project id",
                )
            )
        metric_file = get("CLOUD_ML_HP_METRIC_FILE") or DEFAULT_METRIC_FILE
        raise_all(errors)

        given = {
            "model": get("AIP_MODEL_DIR"),
            "checkpoints": get("AIP_CHECKPOINT_DIR"),
            "logs": get("AIP_TENSORBOARD_LOG_DIR"),
        }
        base: str | None = None
        if None in given.values():
            base = os.path.abspath(get("VTRAIN_OUTPUT_DIR") or DEFAULT_OUTPUT_DIR)
        trial_base = os.path.join(base, trial_id) if base and trial_id else base

        def folder(kind: str) -> str:
            value = given[kind]
            if value is not None:
                return value
            assert trial_base is not None
            return os.path.join(trial_base, kind) + os.sep

        return cls(
            model_dir=folder("model"),
            checkpoint_dir=folder("checkpoints"),
            tensorboard_dir=folder("logs"),
            base_output_dir=base,
            trial_id=trial_id,
            training_data_uri=get("AIP_TRAINING_DATA_URI"),
            validation_data_uri=get("AIP_VALIDATION_DATA_URI"),
            test_data_uri=get("AIP_TEST_DATA_URI"),
            data_format=data_format,
            project_number=project,
            job_id=get("CLOUD_ML_JOB_ID"),
            region=get("CLOUD_ML_REGION"),
            metric_file=metric_file,
            metric_tag=get("CLOUD_ML_HP_METRIC_TAG") or DEFAULT_METRIC_TAG,
        )

    @property
    def dirs(self) -> dict[str, str]:
        """The three output directories by short name: model, checkpoint, tensorboard."""
        return {
            "model": self.model_dir,
            "checkpoint": self.checkpoint_dir,
            "tensorboard": self.tensorboard_dir,
        }

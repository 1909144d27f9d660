"""`RunContext`: where this job writes, what it reads, and which job and trial it is.

Vertex sets `AIP_MODEL_DIR`, `AIP_CHECKPOINT_DIR` and `AIP_TENSORBOARD_LOG_DIR`
from the job's `baseOutputDirectory` (`<base>/model/`, or `<base>/<trial>/model/`
under tuning). When they are unset vtrain lays out the same tree under a local
base folder, so a script that runs alone writes where it would on the platform.

Checkpoints are resumed automatically, so their folder must belong to one job. On the
platform, under `vtrain local run` (which sets VTRAIN_OUTPUT_DIR per job), or with
VTRAIN_OUTPUT_DIR set by hand, the folder is the job's and a restart resumes from it.
A standalone run with none of these gets a fresh folder for all it writes,
``vtrain-output/runs/<time>-<pid>/`` (model, checkpoints, logs and its tuning metric
file), so a second `python train.py` never resumes, or overwrites, the first one's.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping

from vtrain.cluster import ClusterInfo
from vtrain.errors import ConfigError, VtrainError, raise_all
from vtrain.frozen import Frozen
from vtrain.variables import check_trial_id

DEFAULT_METRIC_FILE = "/tmp/hypertune/output.metrics"
DEFAULT_METRIC_TAG = "training/hptuning/metric"
DEFAULT_OUTPUT_DIR = "vtrain-output"
DATA_FORMATS = ("jsonl", "csv", "tf-record", "bigquery")
DATA_URI_VARIABLES = {
    "training": "AIP_TRAINING_DATA_URI",
    "validation": "AIP_VALIDATION_DATA_URI",
    "test": "AIP_TEST_DATA_URI",
}
"""Split name -> the variable in which Vertex names its files (or table)."""
DATA_FORMAT_VARIABLE = "AIP_DATA_FORMAT"
DATA_VARIABLES = frozenset({*DATA_URI_VARIABLES.values(), DATA_FORMAT_VARIABLE})
# The folders Vertex makes under a job's baseOutputDirectory, and the variables naming them.
OUTPUT_FOLDERS = {
    "AIP_MODEL_DIR": "model",
    "AIP_CHECKPOINT_DIR": "checkpoints",
    "AIP_TENSORBOARD_LOG_DIR": "logs",
}

# ASCII digits: str.isdigit() also takes '١٢٣', which no project number holds.
_PROJECT_NUMBER = re.compile(r"[0-9]+")


RUNS_FOLDER = "runs"
"""Under the local base: one folder per standalone run, ``runs/<time>-<pid>/``."""
METRIC_FOLDER, METRIC_NAME = "hypertune", "output.metrics"
"""A standalone run's tuning metric: ``<its folder>/hypertune/output.metrics``."""


def trial_folder(base: str, trial_id: str | None) -> str:
    """Everything one trial writes: ``<base>/<trial>`` under tuning, else `base` itself."""
    return os.path.join(base, trial_id) if trial_id else base


def standalone_run_id() -> str:
    """This process's run id, ``<time>-<pid>``: its folder's name; the same at every call."""
    if not _RUN_ID:
        _RUN_ID.append(f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    return _RUN_ID[0]


# Filled at the first call, not at import: every RunContext of one process names one folder.
_RUN_ID: list[str] = []


def _alone(source: str, trainers: int) -> bool:
    # The PyTorch plugin writes RANK=0, WORLD_SIZE=1 into a lone process's environment:
    # that reads back as torch_env, and is still nothing a platform or launcher restarts.
    return source == "single" or (source == "torch_env" and trainers == 1)


def _launched(env: Mapping[str, str]) -> bool:
    # CLOUD_ML_HP_METRIC_* are set by hand and by `vtrain tune` too; they name no job. The
    # dataset variables are set by hand to try a script on some data: they name no job either,
    # and a second `python train.py` must not resume the first one's steps because of them.
    return "CLOUD_ML_JOB_ID" in env or any(
        k.startswith("AIP_") and k not in DATA_VARIABLES for k in env
    )


def runs_alone(environ: Mapping[str, str] | None = None) -> bool:
    """True for a process no platform or launcher started: a script run by hand."""
    env = os.environ if environ is None else environ
    info = ClusterInfo.from_env(env)
    return _alone(info.source, info.num_trainers) and not _launched(env)


def _standalone_base(env: Mapping[str, str], info: ClusterInfo) -> str | None:
    """The folder of a run that is no job's: VTRAIN_OUTPUT_DIR when set by hand, else
    ``vtrain-output/runs/<time>-<pid>``; None for a replica of a job or a trial."""
    if not _alone(info.source, info.num_trainers) or _launched(env) or info.trial_id:
        return None
    chosen = env.get("VTRAIN_OUTPUT_DIR")
    if chosen:  # set by hand to resume a run on purpose: the folder is that run's
        return os.path.abspath(chosen)
    return os.path.abspath(os.path.join(DEFAULT_OUTPUT_DIR, RUNS_FOLDER, standalone_run_id()))


def metric_file_path(environ: Mapping[str, str] | None = None) -> str:
    """Where the tuning metric goes: CLOUD_ML_HP_METRIC_FILE; else, on a platform or under a
    launcher, the path the tuning service reads (/tmp/hypertune/output.metrics); else, in a
    run alone, ``<its folder>/hypertune/output.metrics``, beside its model."""
    env = os.environ if environ is None else environ
    given = env.get("CLOUD_ML_HP_METRIC_FILE")
    if given:
        return given
    base = _standalone_base(env, ClusterInfo.from_env(env))
    return DEFAULT_METRIC_FILE if base is None else os.path.join(base, METRIC_FOLDER, METRIC_NAME)


def output_dirs(base: str, trial_id: str | None = None) -> dict[str, str]:
    """AIP_MODEL_DIR and friends as Vertex lays them out: ``<base>/[<trial>/]model/`` etc."""
    folder = trial_folder(base, trial_id)
    return {name: os.path.join(folder, kind) + os.sep for name, kind in OUTPUT_FOLDERS.items()}


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
    """Where the model goes: AIP_MODEL_DIR, else ``<base>/[<trial>/]model/``."""
    checkpoint_dir: str
    """Where checkpoints go: AIP_CHECKPOINT_DIR, else ``<base>/[<trial>/]checkpoints/``."""
    tensorboard_dir: str
    """Where TensorBoard logs go: AIP_TENSORBOARD_LOG_DIR, else ``<base>/[<trial>/]logs/``."""
    base_output_dir: str | None
    """The local base the directories default to; None when the platform set them all."""
    trial_id: str | None
    """The tuning trial this run is (the cluster's, else CLOUD_ML_TRIAL_ID); None outside tuning."""
    training_data_uri: str | None
    """AIP_TRAINING_DATA_URI: the training split's file pattern or ``bq://`` table; None unset."""
    validation_data_uri: str | None
    """AIP_VALIDATION_DATA_URI: the validation split's pattern or table; None when unset."""
    test_data_uri: str | None
    """AIP_TEST_DATA_URI: the test split's pattern or table; None when unset."""
    data_format: str | None
    """AIP_DATA_FORMAT: jsonl, csv, tf-record or bigquery; None when unset."""
    project_number: str | None
    """CLOUD_ML_PROJECT_ID: the number (digits, not the id) of the job's project; None unset."""
    job_id: str | None
    """CLOUD_ML_JOB_ID: the platform's id of this job; None when no platform set it."""
    region: str | None
    """CLOUD_ML_REGION: the region the job runs in; None when unset."""
    metric_file: str
    """Where `vtrain.hypertune.report` writes the tuning metric (`metric_file_path` says)."""
    metric_tag: str
    """The tag a reported metric gets: CLOUD_ML_HP_METRIC_TAG, else training/hptuning/metric."""

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
        """Read the run context from `environ` (default `os.environ`): of trial `trial_id`,
        else of the trial the cluster names.

        Every bad variable (a data format, a project number, the cluster) is reported
        at once: one `ConfigError`, or an `ErrorList` of them.
        """
        env = os.environ if environ is None else environ
        errors: list[VtrainError] = []

        def get(name: str) -> str | None:
            value = env.get(name)
            return value if value else None

        # Only a run no platform or launcher describes gets a folder of its own.
        standalone: str | None = None  # a caller that passes the trial has read a cluster
        if trial_id is None:
            # The trial ClusterInfo reads (CLUSTER_SPEC's task.trial, TF_CONFIG's, else
            # CLOUD_ML_TRIAL_ID), so that every folder of a trial lands in the same place
            # whether or not the caller passed it. A second read in one process costs one
            # parse of a small JSON document.
            try:
                info = ClusterInfo.from_env(env)
                trial_id, standalone = info.trial_id, _standalone_base(env, info)
            except VtrainError as e:
                errors.append(e)
        else:  # it becomes a folder name as well, wherever it came from
            try:
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
        if project is not None and not _PROJECT_NUMBER.fullmatch(project):
            errors.append(
                ConfigError(
                    "not a project number",
                    source="CLOUD_ML_PROJECT_ID",
                    value=project,
                    expected="digits only",
                    hint="Vertex sets the project number here, not the project id",
                )
            )
        metric_file = get("CLOUD_ML_HP_METRIC_FILE")
        if metric_file is None:
            metric_file = DEFAULT_METRIC_FILE
            if standalone is not None:  # no tuning service reads it: it stays with the run
                metric_file = os.path.join(standalone, METRIC_FOLDER, METRIC_NAME)
        raise_all(errors)

        given = {name: get(name) for name in OUTPUT_FOLDERS}
        base: str | None = None
        dirs: dict[str, str] = {}
        if None in given.values():
            base = standalone or os.path.abspath(get("VTRAIN_OUTPUT_DIR") or DEFAULT_OUTPUT_DIR)
            dirs = output_dirs(base, trial_id)
        dirs.update((name, value) for name, value in given.items() if value is not None)

        return cls(
            model_dir=dirs["AIP_MODEL_DIR"],
            checkpoint_dir=dirs["AIP_CHECKPOINT_DIR"],
            tensorboard_dir=dirs["AIP_TENSORBOARD_LOG_DIR"],
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


def given_dirs(environ: Mapping[str, str], base: str, trial_id: str | None) -> dict[str, str]:
    """AIP_MODEL_DIR and friends as a process with `environ` finds them (`RunContext.from_env`):
    what a rehearsal's replicas are given, a trial's own folders whatever names the trial (the
    flag, CLUSTER_SPEC, or a Katib manifest's CLOUD_ML_TRIAL_ID). Where `environ` cannot be
    read, the layout under `base` (the replica itself then says what is wrong)."""
    try:
        context = RunContext.from_env(environ)
    except VtrainError:
        return output_dirs(base, trial_id)
    return {
        "AIP_MODEL_DIR": context.model_dir,
        "AIP_CHECKPOINT_DIR": context.checkpoint_dir,
        "AIP_TENSORBOARD_LOG_DIR": context.tensorboard_dir,
    }

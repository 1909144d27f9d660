"""`vtrain render kubeflow --study`: a Katib Experiment from the study file `vtrain tune` runs,
built and read back with the kubeflow_katib_api models, refused where Katib cannot follow the
study, sent, and rehearsed; one study file runs locally, on Vertex and on Kubeflow alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import KubeServer, Result, write_kubeconfig
from targets import STUDY

from vtrain.context import DEFAULT_METRIC_FILE
from vtrain.tune.study_file import read_study

Run = Callable[..., Result]
IMAGE = ["--image", "gcr.io/p/t:1"]
COMMAND = ["--", "python", "-m", "trainer.task", "--epochs", "3"]
TF = ["--framework", "tensorflow", "--workers", "2", "--ps", "1"]


def render(vtrain: Run, *argv: str, platform: str = "kubeflow") -> dict[str, Any]:
    done = vtrain("render", platform, "--name", "exp", *argv, "--format", "json", *COMMAND)
    assert done.status == 0, done.err
    document: dict[str, Any] = json.loads(done.out)
    return document


def experiment(vtrain: Run, *argv: str) -> dict[str, Any]:
    return render(vtrain, *TF, *IMAGE, "--study", STUDY, *argv)


def test_the_experiment_round_trips_through_the_katib_models(vtrain: Run) -> None:
    from kubeflow_katib_api import models

    document = experiment(vtrain, "--output-dir", "gs://b/run")
    model = models.V1beta1Experiment.from_dict(document)
    assert model is not None and model.to_dict() == document
    assert (model.api_version, model.kind) == ("kubeflow.org/v1beta1", "Experiment")
    spec = model.spec
    assert (spec.objective.type, spec.objective.objective_metric_name) == ("minimize", "loss")
    # LAST_MEASUREMENT, as on Vertex: Katib's default would take the best report instead.
    assert [(s.name, s.value) for s in spec.objective.metric_strategies] == [("loss", "latest")]
    assert spec.algorithm.algorithm_name == "random"
    assert (spec.max_trial_count, spec.parallel_trial_count, spec.max_failed_trial_count) == (
        20,
        4,
        3,
    )
    spaces = {p.name: (p.parameter_type, p.feasible_space.to_dict()) for p in spec.parameters}
    assert spaces == {
        "learning_rate": ("double", {"min": "0.0001", "max": "0.1", "distribution": "logUniform"}),
        "layers": ("int", {"min": "1", "max": "4"}),
        "batch_size": ("discrete", {"list": ["16", "32", "64"]}),
        "optimizer": ("categorical", {"list": ["adam", "sgd"]}),
    }
    source = spec.metrics_collector_spec.source.file_system_path
    assert spec.metrics_collector_spec.collector.kind == "File"
    assert (source.kind, source.format, source.path) == ("File", "JSON", DEFAULT_METRIC_FILE)


def test_the_trial_template_is_the_v1_job_with_katib_s_placeholders(vtrain: Run) -> None:
    from kubeflow.training.api_client import ApiClient

    document = experiment(vtrain, "--output-dir", "gs://b/run")
    template = document["spec"]["trialTemplate"]
    assert template["primaryContainerName"] == "tensorflow"
    assert template["primaryPodLabels"] == {"training.kubeflow.org/job-role": "master"}
    assert (
        template["successCondition"] == 'status.conditions.#(type=="Succeeded")#|#(status=="True")#'
    )
    names = [(t["name"], t["reference"]) for t in template["trialParameters"]]
    assert names == [
        ("learning_rate", "learning_rate"),
        ("layers", "layers"),
        ("batch_size", "batch_size"),
        ("optimizer", "optimizer"),
        ("trialName", "${trialSpec.Name}"),
    ]
    trial = template["trialSpec"]
    assert "metadata" not in trial, "Katib names each trial's job itself"

    class Body:
        data = json.dumps(trial)

    client = ApiClient()
    job = client.deserialize(Body(), "KubeflowOrgV1TFJob")
    assert client.sanitize_for_serialization(job) == trial
    for replica in ("Chief", "Worker", "PS"):
        (container,) = trial["spec"]["tfReplicaSpecs"][replica]["template"]["spec"]["containers"]
        assert container["args"] == [
            "-m",
            "trainer.task",
            "--epochs",
            "3",
            "--learning_rate=${trialParameters.learning_rate}",
            "--layers=${trialParameters.layers}",
            "--batch_size=${trialParameters.batch_size}",
            "--optimizer=${trialParameters.optimizer}",
        ]
        env = {e["name"]: e["value"] for e in container["env"]}
        assert env["CLOUD_ML_HP_METRIC_FILE"] == DEFAULT_METRIC_FILE
        assert env["CLOUD_ML_HP_METRIC_TAG"] == "loss"
        assert env["CLOUD_ML_TRIAL_ID"] == "${trialParameters.trialName}"
        assert env["AIP_MODEL_DIR"] == "gs://b/run/${trialParameters.trialName}/model/"


@pytest.mark.parametrize(
    ("framework", "container", "labels"),
    [
        ("pytorch", "pytorch", {"training.kubeflow.org/job-role": "master"}),
        ("xgboost", "xgboost", {"training.kubeflow.org/job-role": "master"}),
        # MXNet's chief is the scheduler: worker 0 leads, and writes the metric.
        (
            "mxnet",
            "tensorflow",
            {
                "training.kubeflow.org/replica-type": "worker",
                "training.kubeflow.org/replica-index": "0",
            },
        ),
    ],
)
def test_the_primary_pod_is_the_leader_s(
    vtrain: Run, framework: str, container: str, labels: dict[str, str]
) -> None:
    ps = ["--ps", "1"] if framework == "mxnet" else []
    document = render(
        vtrain, "--framework", framework, "--workers", "1", *ps, *IMAGE, "--study", STUDY
    )
    template = document["spec"]["trialTemplate"]
    assert template["primaryContainerName"] == container
    assert template["primaryPodLabels"] == labels


def katib_json_parser(text: str, metrics: list[str]) -> list[tuple[str, str, str]]:
    """Katib's file-metricscollector for format JSON (parseLogsInJsonFormat), line by line."""
    from datetime import datetime, timezone

    found = []
    for line in text.split("\n"):
        if not line:
            continue
        obj = json.loads(line)  # Katib fails the trial on a line that is not JSON
        stamp = obj.get("timestamp")
        if isinstance(stamp, float):
            moment = datetime.fromtimestamp(int(stamp), timezone.utc).isoformat()
        else:
            moment = stamp if isinstance(stamp, str) else ""
        for m in metrics:
            if isinstance(obj.get(m), str):  # `jsonObj[m].(string)`: a string, or skipped
                found.append((moment, m, obj[m]))
    return found


def test_the_metrics_collector_reads_what_hypertune_report_writes(tmp_path: Path) -> None:
    metric_file = tmp_path / "hypertune" / "output.metrics"
    script = "from vtrain.hypertune import report\nreport(0.5, step=1)\nreport(0.25, step=2)\n"
    env = {
        **os.environ,
        "CLOUD_ML_HP_METRIC_FILE": str(metric_file),
        "CLOUD_ML_HP_METRIC_TAG": "loss",
    }
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    logged = katib_json_parser(metric_file.read_text(), ["loss"])
    assert [(name, value) for _, name, value in logged] == [("loss", "0.5"), ("loss", "0.25")]
    assert all(moment.startswith(time.strftime("%Y")) for moment, _, _ in logged)


REFUSED = [
    (
        {
            "parameters": [
                {
                    "parameter_id": "x",
                    "categorical_value_spec": {"values": ["a", "b"]},
                    "conditional_parameter_specs": [
                        {
                            "parent_categorical_values": {"values": ["b"]},
                            "parameter_spec": {
                                "parameter_id": "y",
                                "double_value_spec": {"min_value": 0, "max_value": 1},
                            },
                        }
                    ],
                }
            ]
        },
        "parameters.x.conditional_parameter_specs: Katib's ParameterSpec has no parent values: "
        "every parameter of an Experiment is searched in every trial (got ['y'])",
    ),
    (
        {
            "parameters": [
                {
                    "parameter_id": "x",
                    "double_value_spec": {"min_value": 1, "max_value": 2},
                    "scale_type": "UNIT_REVERSE_LOG_SCALE",
                }
            ]
        },
        "parameters.x.scale_type: Katib's feasibleSpace has no reverse-log distribution",
    ),
    (
        {
            "parameters": [
                {
                    "parameter_id": "x",
                    "discrete_value_spec": {"values": [1, 2]},
                    "scale_type": "UNIT_LOG_SCALE",
                }
            ]
        },
        "parameters.x.scale_type: Katib's list of values has no scale",
    ),
    ({"max_failed_trial_count": 5}, "max_failed_trial_count: Katib refuses more failed trials"),
]


@pytest.mark.parametrize(("change", "expected"), REFUSED)
def test_what_katib_cannot_search_is_refused_naming_it(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path, change: dict[str, Any], expected: str
) -> None:
    study = {
        "metrics": [{"metric_id": "loss", "goal": "MINIMIZE"}],
        "parameters": [
            {"parameter_id": "x", "double_value_spec": {"min_value": 0, "max_value": 1}}
        ],
        "algorithm": "RANDOM_SEARCH",
        "max_trial_count": 4,
        **change,
    }
    path = tmp_path / "study.json"
    path.write_text(json.dumps(study))
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    done = vtrain(
        "submit",
        "kubeflow",
        "--name",
        "e",
        *TF,
        *IMAGE,
        "--study",
        str(path),
        "--kubeconfig",
        config,
        "--",
        "python",
        "t.py",
    )
    assert done.status == 2 and f"{path}: {expected}" in done.err, done.err
    assert len(done.err.strip().splitlines()) == 1 and kube_server.calls == []
    # Vertex follows the same study (it has conditions, scales and no such limit).
    if "max_failed" not in expected:
        assert (
            vtrain(
                "render",
                "vertex",
                "--name",
                "e",
                *IMAGE,
                "--study",
                str(path),
                "--",
                "python",
                "t.py",
            ).status
            == 0
        )


def test_grid_search_steps_through_every_integer(vtrain: Run, tmp_path: Path) -> None:
    study = {
        "metrics": [{"metric_id": "acc", "goal": "MAXIMIZE"}],
        "parameters": [
            {"parameter_id": "layers", "integer_value_spec": {"min_value": 1, "max_value": 3}}
        ],
        "algorithm": "GRID_SEARCH",
        "max_trial_count": 3,
        "measurement_selection_type": "BEST_MEASUREMENT",
    }
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(study))
    spec = render(vtrain, *TF, *IMAGE, "--study", str(path))["spec"]
    assert spec["algorithm"]["algorithmName"] == "grid"
    assert spec["parameters"][0]["feasibleSpace"] == {"min": "1", "max": "3", "step": "1"}
    assert spec["objective"]["metricStrategies"] == [{"name": "acc", "value": "max"}]


def test_the_experiment_is_created_in_katib_s_api_group(
    vtrain: Run, kube_server: KubeServer, tmp_path: Path
) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", kube_server.url)
    rendered = experiment(vtrain)
    done = vtrain(
        "submit",
        "kubeflow",
        "--name",
        "exp",
        *TF,
        *IMAGE,
        "--study",
        STUDY,
        "--namespace",
        "team-a",
        "--kubeconfig",
        config,
        *COMMAND,
    )
    assert done.status == 0, done.err
    ((method, path, body),) = kube_server.calls
    assert (method, path) == ("POST", "/apis/kubeflow.org/v1beta1/namespaces/team-a/experiments")
    assert body == {**rendered, "metadata": {**rendered["metadata"], "namespace": "team-a"}}
    assert done.out.strip() == "team-a/Experiment/exp"


def hand_written(vtrain: Run, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "rendered.json"
    done = vtrain(
        "render",
        "kubeflow",
        "--name",
        "exp",
        *TF,
        *IMAGE,
        "--study",
        STUDY,
        "--format",
        "json",
        "-o",
        str(out),
        *COMMAND,
    )
    assert done.status == 0, done.err
    document: dict[str, Any] = json.loads(out.read_text())
    return document


def spec_of(document: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = document["spec"]
    return spec


BAD_EXPERIMENTS: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (
        lambda d: spec_of(d).update(parallelTrialCount=30),
        "spec.parallelTrialCount: more than spec.maxTrialCount (got 30); expected at most 20",
    ),
    (
        lambda d: spec_of(d)["trialTemplate"]["trialSpec"].update(metadata={"name": "fixed"}),
        "spec.trialTemplate.trialSpec.metadata: Katib names each trial's job itself",
    ),
    (
        lambda d: spec_of(d)["trialTemplate"]["trialParameters"].pop(0),
        "spec.trialTemplate.trialSpec: a placeholder no trial parameter fills "
        "(got '${trialParameters.learning_rate}')",
    ),
    (lambda d: spec_of(d)["objective"].update(type="lowest"), "spec.objective.type: not a goal"),
    (lambda d: spec_of(d).update(maxTrailCount=3), "spec.maxTrailCount: unknown field"),
    (
        lambda d: spec_of(d)["trialTemplate"]["trialSpec"]["spec"]["tfReplicaSpecs"][
            "Chief"
        ].update(replicas=2),
        "spec.trialTemplate.trialSpec: spec.tfReplicaSpecs.Chief.replicas: "
        "the chief pool runs exactly one replica",
    ),
]


@pytest.mark.parametrize(("edit", "expected"), BAD_EXPERIMENTS)
def test_a_hand_written_experiment_katib_would_refuse_is_refused(
    vtrain: Run, tmp_path: Path, edit: Callable[[dict[str, Any]], None], expected: str
) -> None:
    document = hand_written(vtrain, tmp_path)
    edit(document)
    path = tmp_path / "experiment.json"
    path.write_text(json.dumps(document))
    done = vtrain("submit", "kubeflow", "--job", str(path))
    assert done.status == 2 and expected in done.err, done.err


def rehearse(job: Path, trial: str, out: Path) -> list[str]:
    """The flags each replica of trial `trial` of a rehearsed job gets."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--job",
            str(job),
            "--trial",
            trial,
            "--output-dir",
            str(out),
            "--",
            sys.executable,
            "-c",
            "import sys; print(sys.argv[1:])",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("chief-0"))
    shown: list[str] = eval(line.split("|", 1)[1])  # the printed argv list
    return [a for a in shown if "=" in a]


def test_one_study_file_runs_locally_on_vertex_and_on_kubeflow(vtrain: Run, tmp_path: Path) -> None:
    vertex, katib = tmp_path / "vertex.json", tmp_path / "katib.json"
    for platform, target, extra in (("vertex", vertex, []), ("kubeflow", katib, TF)):
        done = vtrain(
            "render",
            platform,
            "--name",
            "exp",
            *extra,
            *IMAGE,
            "--study",
            STUDY,
            "--format",
            "json",
            "-o",
            str(target),
            *COMMAND,
        )
        assert done.status == 0, done.err
    # The same study, read back from each document.
    from vtrain.submit.job_file import read_job
    from vtrain.submit.kubeflow.katib import study_of

    studied = read_study(STUDY).to_dict()
    assert study_of(read_job(str(katib)).document, "katib").to_dict() == studied
    # The same trials: `vtrain tune` locally, and the rehearsal of each document.
    records = tmp_path / "records"
    records.mkdir()
    script = tmp_path / "trial.py"
    script.write_text(
        "import os, sys, json\n"
        "from vtrain.hypertune import report\n"
        f"open(os.path.join({str(records)!r}, os.environ['CLOUD_ML_TRIAL_ID']), 'w')"
        ".write(json.dumps(sys.argv[1:]))\n"
        "report(1.0)\n"
    )
    short = tmp_path / "short.yaml"
    short.write_text(
        Path(STUDY)
        .read_text()
        .replace("max_trial_count: 20", "max_trial_count: 3")
        .replace("parallel_trial_count: 4", "parallel_trial_count: 1")
    )
    tuned = vtrain(
        "tune",
        "--study",
        str(short),
        "--output-dir",
        str(tmp_path / "tune"),
        "--",
        sys.executable,
        str(script),
    )
    assert tuned.status == 0, tuned.err
    for trial in ("1", "3"):
        local = json.loads((records / trial).read_text())
        on_vertex = rehearse(vertex, trial, tmp_path / f"v{trial}")
        on_katib = rehearse(katib, trial, tmp_path / f"k{trial}")
        assert on_vertex == on_katib == local, (trial, on_vertex, on_katib, local)

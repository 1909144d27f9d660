"""Every target rendered, compared with its golden file, and read back by the engine's own types.

Set VTRAIN_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate change.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Result
from targets import GOLDEN, TARGETS, render_args

Run = Callable[..., Result]


def render(vtrain: Run, target: str) -> dict[str, Any]:
    done = vtrain(*render_args(target))
    assert done.status == 0, done.err
    document: dict[str, Any] = json.loads(done.out)
    return document


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_rendered_job_matches_its_golden_file(vtrain: Run, target: str) -> None:
    document = render(vtrain, target)
    golden = GOLDEN / f"{target}.json"
    if os.environ.get("VTRAIN_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(document, indent=2) + "\n")
    assert document == json.loads(golden.read_text())


@pytest.mark.parametrize("target", ["vertex", "vertex_study", "vertex_reduction"])
def test_vertex_jobs_parse_back_into_the_sdk_types_unchanged(vtrain: Run, target: str) -> None:
    from google.cloud import aiplatform_v1
    from google.protobuf.json_format import MessageToDict

    document = render(vtrain, target)
    tuning = "trialJobSpec" in document
    cls = aiplatform_v1.HyperparameterTuningJob if tuning else aiplatform_v1.CustomJob
    message = cls.from_json(json.dumps(document), ignore_unknown_fields=False)
    assert MessageToDict(cls.pb(message)) == document
    spec = message.trial_job_spec if tuning else message.job_spec
    pools = spec.worker_pool_specs
    assert pools[0].replica_count == 1
    assert [p.replica_count for p in pools[1:]] == [2, 1, 1][: len(pools) - 1] or target.endswith(
        "reduction"
    )
    if target == "vertex_reduction":
        assert pools[2].container_spec.image_uri.endswith("/reductionserver:latest")
        assert pools[2].replica_count == 2
        assert not pools[2].machine_spec.accelerator_count
        return
    assert spec.base_output_directory.output_uri_prefix == "gs://my-bucket/run1"
    assert pools[3].container_spec.image_uri == "gcr.io/proj/eval:1"
    assert pools[1].container_spec.image_uri == "gcr.io/proj/train:1"
    assert pools[2].machine_spec.machine_type == "n1-highmem-4"
    assert not pools[2].machine_spec.accelerator_type
    assert pools[0].machine_spec.accelerator_type == aiplatform_v1.AcceleratorType.NVIDIA_TESLA_T4
    assert list(pools[0].container_spec.command) == ["python"]
    assert list(pools[0].container_spec.args) == ["-m", "trainer.task", "--epochs", "3"]
    assert spec.scheduling.timeout.total_seconds() == 7200
    if tuning:
        study = message.study_spec
        assert [m.metric_id for m in study.metrics] == ["loss"]
        assert study.metrics[0].goal.name == "MINIMIZE"
        assert [p.parameter_id for p in study.parameters] == [
            "learning_rate",
            "layers",
            "batch_size",
            "optimizer",
        ]
        assert study.parameters[0].scale_type.name == "UNIT_LOG_SCALE"
        assert study.parameters[1].integer_value_spec.max_value == 4
        assert list(study.parameters[3].categorical_value_spec.values) == ["adam", "sgd"]
        assert study.algorithm.name == "RANDOM_SEARCH"
        assert (message.max_trial_count, message.parallel_trial_count) == (20, 4)
        assert message.max_failed_trial_count == 3


@pytest.mark.parametrize("target", ["aiplatform", "aiplatform_study"])
def test_aiplatform_config_conforms_to_the_ml_v1_discovery_schema(vtrain: Run, target: str) -> None:
    import googleapiclient

    from vtrain.submit.aiplatform.schema import problems

    path = os.path.join(
        os.path.dirname(googleapiclient.__file__), "discovery_cache", "documents", "ml.v1.json"
    )
    with open(path) as f:
        schemas = json.load(f)["schemas"]
    document = render(vtrain, target)
    assert problems(document, schemas["GoogleCloudMlV1__Job"], schemas, "") == []
    training = document["trainingInput"]
    assert training["scaleTier"] == "CUSTOM"
    assert training["useChiefInTfConfig"] is True
    assert (training["workerCount"], training["parameterServerCount"]) == ("2", "1")
    assert training["evaluatorConfig"]["imageUri"] == "gcr.io/proj/eval:1"
    assert training["masterConfig"]["acceleratorConfig"] == {
        "count": "1",
        "type": "NVIDIA_TESLA_T4",
    }
    assert "acceleratorConfig" not in training["parameterServerConfig"]
    assert training["jobDir"] == "gs://my-bucket/run1"
    if target == "aiplatform_study":
        hp = training["hyperparameters"]
        assert (hp["goal"], hp["hyperparameterMetricTag"], hp["maxTrials"]) == (
            "MINIMIZE",
            "loss",
            20,
        )
        assert [p["type"] for p in hp["params"]] == ["DOUBLE", "INTEGER", "DISCRETE", "CATEGORICAL"]


def test_the_schema_check_itself_refuses_what_the_api_would(vtrain: Run) -> None:
    # The check that passes the golden configs must fail a broken one, or it proves nothing.
    from vtrain.submit.aiplatform.schema import problems
    from vtrain.submit.sdk import ml_v1_schemas

    schemas = ml_v1_schemas()
    bad = {"trainingInput": {"scaleTier": "HUGE", "workerCount": "two", "masterConfg": {}}}
    found = {p for p, _, _ in problems(bad, schemas["GoogleCloudMlV1__Job"], schemas, "")}
    assert found == {
        ".trainingInput.scaleTier",
        ".trainingInput.workerCount",
        ".trainingInput.masterConfg",
    }


@pytest.mark.parametrize(
    ("target", "kind"),
    [("tfjob", "TFJob"), ("pytorchjob", "PyTorchJob"), ("xgboostjob", "XGBoostJob")],
)
def test_kubeflow_manifests_parse_back_into_the_training_operator_models(
    vtrain: Run, target: str, kind: str
) -> None:
    from kubeflow.training import models
    from kubeflow.training.api_client import ApiClient

    class Body:
        def __init__(self, doc: Any) -> None:
            self.data = json.dumps(doc)

    document = render(vtrain, target)
    client = ApiClient()
    job = client.deserialize(Body(document), f"KubeflowOrgV1{kind}")
    assert isinstance(job, getattr(models, f"KubeflowOrgV1{kind}"))
    assert client.sanitize_for_serialization(job) == document
    specs = {
        "TFJob": job.spec.tf_replica_specs if kind == "TFJob" else None,
        "PyTorchJob": getattr(job.spec, "pytorch_replica_specs", None),
        "XGBoostJob": getattr(job.spec, "xgb_replica_specs", None),
    }[kind]
    container = {"TFJob": "tensorflow", "PyTorchJob": "pytorch", "XGBoostJob": "xgboost"}[kind]
    chief = "Chief" if kind == "TFJob" else "Master"
    assert specs[chief].replicas == 1 and specs["Worker"].replicas == 2
    assert specs[chief].template.spec.containers[0].name == container
    env = {e.name: e.value for e in specs["Worker"].template.spec.containers[0].env}
    assert env["AIP_MODEL_DIR"] == "gs://my-bucket/run1/model/"
    assert job.spec.run_policy.active_deadline_seconds == 7200
    if kind == "TFJob":
        assert set(specs) == {"Chief", "Worker", "PS", "Evaluator"}
        assert specs["Evaluator"].template.spec.containers[0].image == "gcr.io/proj/eval:1"
        gpu = specs["Chief"].template.spec.containers[0].resources.limits
        assert gpu == {"nvidia.com/gpu": "1"}
        assert specs["PS"].template.spec.containers[0].resources is None
    else:
        assert set(specs) == {"Master", "Worker"}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_yaml_and_json_print_the_same_document(vtrain: Run, target: str) -> None:
    import yaml

    done = vtrain(*render_args(target, "yaml"))
    assert done.status == 0, done.err
    assert yaml.safe_load(done.out) == render(vtrain, target)

"""A Katib Experiment from a command line: the study, and the v1 job each trial runs.

Built with the `kubeflow_katib_api` models, then checked by `manifest.check`
(the Experiment with `katib`, its trial's job with the `kubeflow-training`
models), as every rendered document is.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from vtrain import plugins
from vtrain.cluster.info import ClusterInfo
from vtrain.cluster.roles import CHIEF
from vtrain.context import DEFAULT_METRIC_FILE
from vtrain.errors import VtrainError
from vtrain.submit import sdk
from vtrain.submit.kubeflow.katib import (
    ALGORITHMS,
    API_VERSION,
    DISTRIBUTIONS,
    FAILED,
    JOB_ROLE,
    KIND,
    REPLICA_INDEX,
    REPLICA_TYPE,
    SUCCEEDED,
    TRIAL_NAME,
    TYPES,
    trial_name_parameter,
)
from vtrain.submit.kubeflow.kinds import KINDS
from vtrain.submit.kubeflow.manifest import check
from vtrain.submit.options import JobOptions
from vtrain.tune.study import Parameter, Study


def render(options: JobOptions, trial_job: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(kind, document): the Experiment of `options.study`, each trial a copy of `trial_job`."""
    study = options.study
    assert study is not None and options.framework is not None
    m = sdk.katib_models()
    trial_spec = copy.deepcopy(dict(trial_job))
    # Katib names each trial's job itself, in the Experiment's namespace.
    meta = {
        k: v for k, v in trial_spec.get("metadata", {}).items() if k not in ("name", "namespace")
    }
    trial_spec["metadata"] = meta
    if not meta:
        del trial_spec["metadata"]
    kind = str(trial_job["kind"])
    declared = plugins.get(options.framework).kubeflow
    assert declared is not None
    experiment = m.V1beta1Experiment(
        api_version=API_VERSION,
        kind=KIND,
        metadata=m.IoK8sApimachineryPkgApisMetaV1ObjectMeta(
            name=options.name, namespace=options.namespace, labels=dict(options.labels) or None
        ),
        spec=m.V1beta1ExperimentSpec(
            objective=_objective(m, study),
            algorithm=m.V1beta1AlgorithmSpec(algorithm_name=ALGORITHMS[study.algorithm]),
            parameters=[_parameter(m, p, study.algorithm) for p in study.parameters],
            max_trial_count=study.max_trial_count,
            parallel_trial_count=study.parallel_trial_count,
            max_failed_trial_count=study.max_failed_trial_count or None,
            metrics_collector_spec=m.V1beta1MetricsCollectorSpec(
                collector=m.V1beta1CollectorSpec(kind="File"),
                source=m.V1beta1SourceSpec(
                    file_system_path=m.V1beta1FileSystemPath(
                        path=DEFAULT_METRIC_FILE, kind="File", format="JSON"
                    )
                ),
            ),
            trial_template=m.V1beta1TrialTemplate(
                primary_container_name=KINDS[declared.kind].container,
                primary_pod_labels=_primary_pod(options),
                success_condition=SUCCEEDED,
                failure_condition=FAILED,
                trial_parameters=[
                    *(
                        m.V1beta1TrialParameterSpec(
                            name=p.parameter_id,
                            reference=p.parameter_id,
                            description=f"--{p.parameter_id} of each trial ({kind})",
                        )
                        for p in study.parameters
                    ),
                    m.V1beta1TrialParameterSpec(
                        name=trial_name_parameter(study),
                        reference=TRIAL_NAME,
                        description="the trial's name: CLOUD_ML_TRIAL_ID, and its output folder",
                    ),
                ],
                trial_spec=trial_spec,
            ),
        ),
    )
    document: dict[str, Any] = experiment.to_dict()
    check(document, source="vtrain submit kubeflow --study")
    return KIND, document


def _objective(m: Any, study: Study) -> Any:
    goal = study.metric.goal.lower()  # MINIMIZE -> minimize
    # LAST_MEASUREMENT: the trial's last report counts, as on Vertex; Katib's default is the best.
    best = "min" if study.metric.goal == "MINIMIZE" else "max"
    strategy = "latest" if study.measurement_selection == "LAST_MEASUREMENT" else best
    return m.V1beta1ObjectiveSpec(
        type=goal,
        objective_metric_name=study.metric.metric_id,
        metric_strategies=[m.V1beta1MetricStrategy(name=study.metric.metric_id, value=strategy)],
    )


def _parameter(m: Any, p: Parameter, algorithm: str) -> Any:
    space: dict[str, Any] = {}
    if p.type in ("DOUBLE", "INTEGER"):
        assert p.min_value is not None and p.max_value is not None
        cast = float if p.type == "DOUBLE" else int
        space.update(min=repr(cast(p.min_value)), max=repr(cast(p.max_value)))
        if p.scale != "LINEAR":
            space["distribution"] = DISTRIBUTIONS[p.scale]
        if p.type == "INTEGER" and algorithm == "GRID_SEARCH":
            space["step"] = "1"  # every integer, as Vertex's grid tries them
    else:
        space["list"] = [str(v) for v in p.values]
    return m.V1beta1ParameterSpec(
        name=p.parameter_id,
        parameter_type=TYPES[p.type],
        feasible_space=m.V1beta1FeasibleSpace(**space),
    )


def _primary_pod(options: JobOptions) -> dict[str, str]:
    """The labels of the leader's pod: the one whose metric file Katib reads."""
    assert options.framework is not None
    cluster = {
        pool.role: [f"{pool.role}-{i}:1" for i in range(pool.count)]
        for pool in options.pools
        if pool.count
    }
    info = ClusterInfo.from_json(
        json.dumps({"cluster": cluster, "task": {"type": CHIEF, "index": 0}}), variable="TF_CONFIG"
    )
    try:
        leader = plugins.get(options.framework).leader(info)
    except VtrainError:
        # A topology the plugin refuses fails when the job starts, as it would without Katib.
        leader = None
    if leader is None or leader[0] == CHIEF:
        # The operator labels the chief's (or master's) pod job-role=master.
        return {JOB_ROLE: "master"}
    return {REPLICA_TYPE: leader[0], REPLICA_INDEX: str(leader[1])}

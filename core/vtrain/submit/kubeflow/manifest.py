"""A Kubeflow manifest read back: a training-operator v1 job, or a Trainer v2 TrainJob, checked.

`check` reads a v1 manifest into the `kubeflow-training` models and refuses
any field the round trip would drop (a typo, or a field of another kind),
then what no operator could run; a TrainJob goes to `trainjob.check`, and a
Katib Experiment to `katib.check`, which checks its trial's job here in turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from vtrain.cluster.roles import PS, WORKER
from vtrain.errors import ConfigError, Problems
from vtrain.submit import sdk
from vtrain.submit.document import JobDocument
from vtrain.submit.kubeflow import katib, trainjob
from vtrain.submit.kubeflow.containers import replica_spec_problems
from vtrain.submit.kubeflow.gke import selector_problems
from vtrain.submit.kubeflow.kinds import API_VERSION, KINDS
from vtrain.submit.kubeflow.round_trip import round_trip_problems

SHAPE = "kind/apiVersion (Kubeflow)"


class _Response:
    """What `ApiClient.deserialize` reads: an HTTP body."""

    def __init__(self, document: Any) -> None:
        self.data = json.dumps(document)


def parse(document: Mapping[str, Any], *, source: str) -> Any:
    """The kubeflow-training model of a v1 job manifest (TFJob, PyTorchJob, XGBoostJob)."""
    kind = document.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ConfigError(
            "not a training-operator v1 job, a TrainJob or a Katib Experiment",
            source=source,
            path="kind",
            value=kind,
            expected=" or ".join([*KINDS, trainjob.KIND, katib.KIND]),
        )
    sdk.kubeflow_training()
    try:
        return sdk.kubeflow_api_client().deserialize(_Response(document), f"KubeflowOrgV1{kind}")
    except (ValueError, TypeError, AttributeError, KeyError, OverflowError) as e:
        # The generated models fail on a value of the wrong shape with whatever Python raises
        # (a list where a mapping belongs: AttributeError).
        said = " ".join(str(e).split())[:200]
        raise ConfigError(
            f"not a valid {kind}: {type(e).__name__}: {said}",
            source=source,
            expected=f"the fields of a {kind}, each of its type",
        ) from None


def check(document: Mapping[str, Any], *, source: str) -> None:
    """Refuse a manifest the models cannot hold, or that no operator could run."""
    if document.get("kind") == trainjob.KIND:
        trainjob.check(document, source=source)
        return
    if document.get("kind") == katib.KIND:
        katib.check(document, source=source)
        trial_spec = document["spec"]["trialTemplate"]["trialSpec"]
        if not isinstance(trial_spec, Mapping):
            raise ConfigError(
                "not a job manifest",
                source=source,
                path="spec.trialTemplate.trialSpec",
                value=trial_spec,
                expected="the TFJob, PyTorchJob or XGBoostJob each trial runs",
            )
        check(trial_spec, source=f"{source}: spec.trialTemplate.trialSpec")
        return
    job = parse(document, source=source)
    back = sdk.kubeflow_api_client().sanitize_for_serialization(job)
    problems = Problems(source, kind=ConfigError)
    round_trip_problems(
        document, back, models="kubeflow-training", api_version=API_VERSION, problems=problems
    )
    kind = KINDS[str(document["kind"])]
    field = kind.replica_specs
    spec_of = document.get("spec")
    specs = (spec_of.get(field) if isinstance(spec_of, Mapping) else None) or {}
    if not isinstance(specs, Mapping):
        raise ConfigError(
            "not a mapping",
            source=source,
            path=f"spec.{field}",
            value=specs,
            expected="replica type -> replica spec",
        )
    allowed = list(kind.replica_types.values())
    if not specs:
        problems.bad(f"spec.{field}", "no replicas", expected="at least one replica spec")
    for name in specs:
        if name not in allowed:
            problems.bad(
                f"spec.{field}.{name}",
                f"not a {kind.name} replica type",
                name,
                " or ".join(allowed),
            )
    for name, spec in specs.items():
        replica_spec_problems(spec, f"spec.{field}.{name}", problems)
    # What follows reads the replica specs: their shape must hold first.
    problems.raise_all()
    ps, worker = kind.replica_types.get(PS), kind.replica_types[WORKER]
    if (
        ps in specs
        and (specs.get(ps) or {}).get("replicas", 1)
        and not ((specs.get(worker) or {}).get("replicas", 0 if worker not in specs else 1))
    ):
        problems.bad(
            f"spec.{field}.{ps}",
            "parameter servers serve workers, and the job has none",
            expected=f"a {worker} replica spec with 1 or more replicas",
        )
    for name, spec in specs.items():
        pod = spec["template"]["spec"]
        for label, value, expected in selector_problems(pod.get("nodeSelector") or {}):
            problems.bad(
                f"spec.{field}.{name}.template.spec.nodeSelector.{label}",
                "no GKE node carries this",
                value,
                expected,
            )
    count = (specs.get(kind.chief) or {}).get("replicas", 1)
    if kind.chief in specs and count != 1:
        problems.bad(
            f"spec.{field}.{kind.chief}.replicas",
            "the chief pool runs exactly one replica",
            count,
            "1",
        )
    problems.raise_all()


def recognizes(document: Mapping[str, Any]) -> bool:
    """True for a Kubernetes object: it has a kind and an apiVersion."""
    return "kind" in document and "apiVersion" in document


def load(document: dict[str, Any], source: str, name: str) -> JobDocument:
    """Check a Kubeflow job file's manifest."""
    check(document, source=source)
    return JobDocument("kubeflow", str(document["kind"]), document, source)


def rename(document: dict[str, Any], name: str) -> dict[str, Any]:
    """The manifest with `name` as metadata.name (--name with --job)."""
    return {**document, "metadata": {**document.get("metadata", {}), "name": name}}

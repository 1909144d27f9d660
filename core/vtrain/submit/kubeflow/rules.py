"""Kubeflow's rules for a command line: the job's kind from the plugin's declaration, or a TrainJob.

`--framework NAME` is a vtrain plugin: its `kubeflow` declaration names the
operator's job kind, and the kind says the container's name and which roles the
job may have (`kinds`). A plugin without a declaration is refused here by name.
Vertex's and AI Platform's project, region and network have no place in a
Kubernetes job; a study becomes a Katib Experiment (`katib`), which refuses
what Katib cannot search. Names, namespaces and labels follow Kubernetes'
rules, not Google Cloud's.
"""

from __future__ import annotations

import re

from vtrain import plugins
from vtrain.cluster.roles import CHIEF, PS, WORKER
from vtrain.errors import VtrainError
from vtrain.plugins.base import KubeflowJob
from vtrain.submit.kubeflow import katib, runtimes
from vtrain.submit.kubeflow.kinds import KINDS
from vtrain.submit.pools import COUNT_FLAGS, counts
from vtrain.submit.problems import Problems, Rules
from vtrain.submit.request import JobRequest
from vtrain.submit.values import DNS_1123_LABEL, KUBERNETES_LABELS, MAX_LABEL
from vtrain.tune.study import Study

# A job's name: a DNS-1035 label, as the operator's webhooks and TrainJob's CEL rule ask (the
# operator names Services after it, and a Service name may not start with a digit).
NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
NAME_SAYS = (
    "a DNS-1035 label: lowercase letters, digits and '-', at most 63, starting with a letter "
    "and ending with a letter or digit"
)
# A runtime's name: any Kubernetes object name (a DNS-1123 label).
RUNTIME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
RUNTIME_SAYS = "lowercase letters, digits and '-', at most 63"
NAMESPACE_SAYS = (
    "a DNS-1123 label: lowercase letters, digits and '-', at most 63, starting and ending "
    "with a letter or digit"
)
TRAINJOB = "--trainjob [RUNTIME] for a Trainer v2 TrainJob"


def check(request: JobRequest, study: Study | None, problems: Problems) -> None:
    """Refuse what a Kubeflow job cannot run."""
    if request.name is not None:
        problems.job_name(request.name, NAME, NAME_SAYS)
    namespace = request.namespace
    if namespace is not None and not (
        len(namespace) <= MAX_LABEL and DNS_1123_LABEL.fullmatch(namespace)
    ):
        problems.bad("--namespace", "not a Kubernetes namespace", namespace, NAMESPACE_SAYS)
    _output_dir(request.output_dir, problems)
    if study is not None:
        if request.trainjob is not None:
            problems.bad(
                "--study",
                "Katib's trials here run a training-operator job, not a TrainJob",
                request.study,
                "--framework NAME with --study, or no --study with --trainjob",
            )
        problems.add(*katib.refusals(study, request.study or "--study"))
    problems.refuse("--project", request.project, "a Kubernetes job has no project")
    problems.refuse("--network", request.network, "set the network on the cluster")
    problems.refuse("--region", request.region, "the kubeconfig names the cluster")
    if request.trainjob is not None:
        _trainjob(request, problems)
    elif request.framework is None:
        names = " or ".join(declarations())
        problems.bad(
            "--framework",
            "Kubeflow needs the job's kind",
            None,
            f"{names}, or {TRAINJOB}" if names else TRAINJOB,
        )
    else:
        _framework(request, problems)


def elsewhere(request: JobRequest, problems: Problems) -> None:
    """Refuse Kubeflow's own options on another platform."""
    if request.trainjob is not None:
        problems.bad("--trainjob", "a TrainJob is a Kubeflow job", request.trainjob, "kubeflow")
    problems.refuse("--namespace", request.namespace, "only a Kubernetes job has a namespace")


def declarations() -> dict[str, KubeflowJob]:
    """Each installed plugin's Kubeflow job, by name; left out: none declared, or fails to load."""
    found = {}
    for name in plugins.available():
        try:
            job = plugins.get(name).kubeflow
        except VtrainError:
            continue  # named when it is asked for; here it only shortens a list of choices
        if job is not None:
            found[name] = job
    return found


def _runtime_declared(name: str, problems: Problems) -> None:
    """A bare --trainjob takes the runtime the plugin names: refuse a plugin that names none."""
    try:
        declared = plugins.get(name).kubeflow
    except VtrainError as e:
        problems.add(e)
        return
    if declared is None:
        problems.bad(
            "--trainjob",
            f"the {name} plugin names no Kubeflow Trainer runtime",
            None,
            "--trainjob RUNTIME, a ClusterTrainingRuntime your cluster has",
        )


def _framework_declared(name: str, problems: Problems) -> KubeflowJob | None:
    """The plugin's Kubeflow declaration; None (and said) when it has none."""
    try:
        declared = plugins.get(name).kubeflow
    except VtrainError as e:
        problems.add(e)
        return None
    if declared is None:
        others = " or ".join(declarations())
        problems.bad(
            "--framework",
            f"the {name} plugin declares no Kubeflow job",
            name,
            f"a plugin that declares one: {others}" if others else "a plugin that declares one",
            hint="--trainjob RUNTIME runs the job on a Trainer v2 runtime instead, "
            "or give the plugin a `kubeflow = KubeflowJob(kind)`",
        )
    return declared


def _framework(request: JobRequest, problems: Problems) -> None:
    """The plugin's declared kind exists, and admits every role the job has."""
    name = request.framework
    assert name is not None
    declared = _framework_declared(name, problems)
    if declared is None:
        return
    kind = KINDS.get(declared.kind)
    if kind is None:
        problems.bad(
            "--framework",
            f"the {name} plugin declares a job kind the training operator does not run",
            declared.kind,
            " or ".join(KINDS),
        )
        return
    given = counts(request)
    if PS in kind.replica_types:
        problems.ps_need_workers(request)
    for role, flag in COUNT_FLAGS.items():
        if given[role] > 0 and role not in kind.replica_types:
            problems.bad(
                flag,
                f"a {name} job has {kind.has} only",
                given[role],
                f"0 with --framework {name}",
                hint=_roles_hint(role),
            )


def _roles_hint(role: str) -> str | None:
    """Which kinds, and so which --framework, have `role`."""
    kinds = [k for k in KINDS.values() if role in k.replica_types]
    if not kinds:
        return None
    declared = declarations()
    hints = []
    for kind in kinds:
        names = [n for n, job in declared.items() if job.kind == kind.name]
        runs = f" (--framework {' or '.join(names)})" if names else ""
        hints.append(f"a {kind.name}{runs} has {kind.has}")
    return "; ".join(hints)


def _output_dir(value: str | None, problems: Problems) -> None:
    if value is None:
        return
    if not (value.startswith("gs://") or value.startswith("/")):
        problems.bad(
            "--output-dir",
            "not a Cloud Storage URI or a path in the pods",
            value,
            "gs://BUCKET/PATH or an absolute path on a mounted volume",
        )
    elif value.startswith("gs://") and len(value) <= len("gs://"):
        problems.bad("--output-dir", "no bucket", value, "gs://BUCKET/PATH")


def _trainjob(request: JobRequest, problems: Problems) -> None:
    """`--trainjob [RUNTIME]`: refuse what a TrainJob cannot say."""
    runtime = request.trainjob
    if runtime and not RUNTIME.fullmatch(runtime):
        problems.bad("--trainjob", "not a runtime name", runtime, RUNTIME_SAYS)
    try:
        laid = runtimes.needs_layout(runtime or "", request.framework)
    except VtrainError as e:
        problems.add(e)
        return
    if request.framework is not None and not runtime:
        _runtime_declared(request.framework, problems)
    if not laid:
        why = "a TrainJob's nodes are all trainers, unless vtrain's layout gives them roles"
        for flag, count in (("--ps", request.ps), ("--evaluators", request.evaluators)):
            if count:
                problems.bad(
                    flag,
                    why,
                    count,
                    "0 with --trainjob; --workers N gives numNodes N+1",
                    hint="--framework tensorflow or mxnet runs every role, on vtrain's runtime",
                )
    else:
        problems.ps_need_workers(request)
    # One trainer template for every node: a per-role setting has nowhere to go.
    for flag, value, all_nodes in (
        ("--worker-image", request.role_images.get(WORKER), "--image"),
        ("--chief-machine-type", request.role_machine_types.get(CHIEF), "--machine-type"),
        ("--worker-machine-type", request.role_machine_types.get(WORKER), "--machine-type"),
        ("--chief-accelerator", request.role_accelerators.get(CHIEF), "--accelerator"),
        ("--worker-accelerator", request.role_accelerators.get(WORKER), "--accelerator"),
    ):
        if value is not None:
            problems.bad(
                flag,
                "every node of a TrainJob runs the same trainer",
                value,
                f"no {flag} with --trainjob; {all_nodes} sets it for all nodes",
            )


RULES = Rules(check=check, elsewhere=elsewhere, default_machine=None, labels=KUBERNETES_LABELS)

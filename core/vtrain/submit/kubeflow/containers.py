"""What Kubernetes asks of a replica's pod that the training-operator models let through.

The kubeflow-training models are generated code that keeps a value of the
wrong type as it is (`containers: [null]`, `command: "python"`, `replicas:
"two"`); the API server would refuse each one. These checks refuse them
first, naming the field, so that the rehearsal and the sender read a
manifest whose shape is known.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from vtrain.errors import Problems

# Kubernetes' rule for an EnvVar's name (IsEnvVarName).
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")


def replica_spec_problems(spec: Any, path: str, problems: Problems) -> None:
    """A v1 replica spec: a mapping, a whole `replicas` of 0 or more, a pod with containers."""
    if not isinstance(spec, Mapping):
        problems.bad(path, "not a mapping", spec, "a replica spec: {replicas, template}")
        return
    replicas = spec.get("replicas")
    if replicas is not None and (
        isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0
    ):
        problems.bad(
            f"{path}.replicas", "not a replica count", replicas, "a whole number, 0 or more"
        )
    template = spec.get("template")
    pod = template.get("spec") if isinstance(template, Mapping) else None
    if not isinstance(pod, Mapping):
        problems.bad(f"{path}.template.spec", "no pod spec", pod, "a pod spec with its containers")
        return
    container_problems(pod.get("containers"), f"{path}.template.spec", problems)


def container_problems(containers: Any, path: str, problems: Problems) -> None:
    """A pod's containers: at least one, each named, its command, args and env well formed."""
    where = f"{path}.containers"
    if not isinstance(containers, list) or not containers:
        # The models take an empty list; Kubernetes refuses a pod without a container.
        problems.bad(
            where, "a pod without containers", containers, "a list of at least one container"
        )
        return
    for i, container in enumerate(containers):
        at = f"{where}[{i}]"
        if not isinstance(container, Mapping):
            problems.bad(at, "not a container", container, "a mapping with name and image")
            continue
        name = container.get("name")
        if not isinstance(name, str) or not name:
            problems.bad(
                f"{at}.name", "a container without a name", name, "a name, as Kubernetes requires"
            )
        command_problems(container, at, problems)


def command_problems(container: Mapping[str, Any], path: str, problems: Problems) -> None:
    """`command` and `args` are lists of strings, `env` a list of named variables."""
    for field in ("command", "args"):
        words = container.get(field)
        if words is not None and (
            not isinstance(words, list) or not all(isinstance(w, str) for w in words)
        ):
            problems.bad(
                f"{path}.{field}",
                "not a list of strings",
                words,
                'a list of strings, e.g. ["python", "t.py"]',
            )
    env = container.get("env")
    if env is not None and (
        not isinstance(env, list)
        or not all(isinstance(e, Mapping) and isinstance(e.get("name"), str) for e in env)
    ):
        problems.bad(
            f"{path}.env",
            "not a list of variables",
            env,
            "a list of {name, value}, each with a name",
        )
        return
    for i, variable in enumerate(env or []):
        if not _ENV_NAME.fullmatch(variable["name"]):
            problems.bad(
                f"{path}.env[{i}].name",
                "not a variable name",
                variable["name"],
                "letters, digits, '_', '-' and '.', as Kubernetes requires (e.g. MODE)",
            )

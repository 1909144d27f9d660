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

from vtrain.errors import ConfigError, VtrainError

# Kubernetes' rule for an EnvVar's name (IsEnvVarName).
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")


def replica_spec_problems(spec: Any, source: str, path: str) -> list[VtrainError]:
    """A v1 replica spec: a mapping, a whole `replicas` of 0 or more, a pod with containers."""
    errors: list[VtrainError] = []

    def bad(where: str, problem: str, value: Any, expected: str) -> None:
        errors.append(
            ConfigError(problem, source=source, path=where, value=value, expected=expected)
        )

    if not isinstance(spec, Mapping):
        bad(path, "not a mapping", spec, "a replica spec: {replicas, template}")
        return errors
    replicas = spec.get("replicas")
    if replicas is not None and (
        isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0
    ):
        bad(f"{path}.replicas", "not a replica count", replicas, "a whole number, 0 or more")
    template = spec.get("template")
    pod = template.get("spec") if isinstance(template, Mapping) else None
    if not isinstance(pod, Mapping):
        bad(f"{path}.template.spec", "no pod spec", pod, "a pod spec with its containers")
        return errors
    return errors + container_problems(pod.get("containers"), source, f"{path}.template.spec")


def container_problems(containers: Any, source: str, path: str) -> list[VtrainError]:
    """A pod's containers: at least one, each named, its command, args and env well formed."""
    where = f"{path}.containers"
    if not isinstance(containers, list) or not containers:
        # The models take an empty list; Kubernetes refuses a pod without a container.
        return [
            ConfigError(
                "a pod without containers",
                source=source,
                path=where,
                value=containers,
                expected="a list of at least one container",
            )
        ]
    errors: list[VtrainError] = []
    for i, container in enumerate(containers):
        at = f"{where}[{i}]"
        if not isinstance(container, Mapping):
            errors.append(
                ConfigError(
                    "not a container",
                    source=source,
                    path=at,
                    value=container,
                    expected="a mapping with name and image",
                )
            )
            continue
        name = container.get("name")
        if not isinstance(name, str) or not name:
            errors.append(
                ConfigError(
                    "a container without a name",
                    source=source,
                    path=f"{at}.name",
                    value=name,
                    expected="a name, as Kubernetes requires",
                )
            )
        errors += command_problems(container, source, at)
    return errors


def command_problems(container: Mapping[str, Any], source: str, path: str) -> list[VtrainError]:
    """`command` and `args` are lists of strings, `env` a list of named variables."""
    errors: list[VtrainError] = []
    for field in ("command", "args"):
        words = container.get(field)
        if words is not None and (
            not isinstance(words, list) or not all(isinstance(w, str) for w in words)
        ):
            errors.append(
                ConfigError(
                    "not a list of strings",
                    source=source,
                    path=f"{path}.{field}",
                    value=words,
                    expected='a list of strings, e.g. ["python", "t.py"]',
                )
            )
    env = container.get("env")
    if env is not None and (
        not isinstance(env, list)
        or not all(isinstance(e, Mapping) and isinstance(e.get("name"), str) for e in env)
    ):
        errors.append(
            ConfigError(
                "not a list of variables",
                source=source,
                path=f"{path}.env",
                value=env,
                expected="a list of {name, value}, each with a name",
            )
        )
        return errors
    for i, variable in enumerate(env or []):
        if not _ENV_NAME.fullmatch(variable["name"]):
            errors.append(
                ConfigError(
                    "not a variable name",
                    source=source,
                    path=f"{path}.env[{i}].name",
                    value=variable["name"],
                    expected="letters, digits, '_', '-' and '.', as "
                    "Kubernetes requires (e.g. MODE)",
                )
            )
    return errors

"""A job document read back: a rendered or hand-written CustomJob, config.yaml or manifest.

`read_job` tells the platform from the document's shape, checks it with that
engine's types or schema, and returns it in the form the engine would send.
`vtrain submit --job` sends it; `vtrain local run --job` rehearses it.
"""

from __future__ import annotations

import json
import os
from typing import Any

from vtrain.errors import ConfigError
from vtrain.submit.document import JobDocument
from vtrain.submit.engines import ENGINES

__all__ = ["JobDocument", "load_job", "read_job"]


def read_job(path: str) -> JobDocument:
    """Read and check a .yaml/.yml or .json job file."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError(f"cannot read the job file: {e.strerror}", source=path) from None
    if path.endswith(".json"):
        try:
            document = json.loads(text)
        except ValueError as e:
            raise ConfigError(f"not valid JSON: {e}", source=path) from None
    else:
        from vtrain.submit.sdk import yaml_module
        from vtrain.yaml_errors import yaml_problem

        yaml = yaml_module()
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ConfigError(f"not valid YAML: {yaml_problem(e, text)}", source=path) from None
    name = os.path.splitext(os.path.basename(path))[0]
    return load_job(document, source=path, name=name)


def load_job(document: Any, *, source: str, name: str = "vtrain-job") -> JobDocument:
    """Check a parsed job document; the platform is told from its shape."""
    if not isinstance(document, dict):
        raise ConfigError(
            "not a job document", source=source, value=type(document).__name__,
            expected="a CustomJob, HyperparameterTuningJob, config.yaml or Kubeflow manifest",
        )  # fmt: skip
    for engine in ENGINES.values():
        if engine.recognizes(document):
            return engine.load(document, source, name)
    shapes = [engine.shape for engine in reversed(list(ENGINES.values()))]
    raise ConfigError(
        "not a job vtrain knows", source=source, value=sorted(document)[:6],
        expected=", ".join(shapes[:-1]) + " or " + shapes[-1],
    )  # fmt: skip

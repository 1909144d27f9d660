"""A job document read back: a rendered or hand-written CustomJob, config.yaml or manifest.

`read_job` tells the platform from the document's shape, checks it with that
engine's types or schema, and returns it in the form the engine would send.
`vtrain submit --job` sends it; `vtrain local run --job` rehearses it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from vtrain.documents import check_tree, parse_json, parse_yaml, read_text
from vtrain.errors import ConfigError
from vtrain.redact import HIDDEN
from vtrain.submit.document import JobDocument
from vtrain.submit.engines import ENGINES

__all__ = ["JobDocument", "load_job", "read_job", "redaction_mark"]


def read_job(path: str) -> JobDocument:
    """Read and check a .yaml/.yml or .json job file, within `vtrain.documents`' bounds."""
    text = read_text(path, "the job file")
    if path.endswith(".json"):
        document = parse_json(text, path)
    else:
        from vtrain.submit.sdk import yaml_module

        document = parse_yaml(text, path, yaml_module())
    name = os.path.splitext(os.path.basename(path))[0]
    return load_job(document, source=path, name=name)


def load_job(document: Any, *, source: str, name: str = "vtrain-job") -> JobDocument:
    """Check a parsed job document; the platform is told from its shape."""
    if not isinstance(document, dict):
        raise ConfigError(
            "not a job document",
            source=source,
            value=type(document).__name__,
            expected="a CustomJob, HyperparameterTuningJob, config.yaml or Kubeflow manifest",
        )
    # Read from a file, the parser has checked this already; a document built in memory (a
    # render, a test) has not, and a surrogate or a NUL would otherwise first fail in a
    # replica's start or the API's encoder, far from the field that holds it.
    check_tree(document, source)
    marked = redaction_mark(document)
    if marked is not None:
        # A document printed by `vtrain render` hides credentials; sent, the job would run
        # with *** for a password. Only the file -o writes holds the real values.
        raise ConfigError(
            f"holds {HIDDEN}, where a printed document hides a credential",
            source=source,
            path=marked,
            expected="the real value",
            hint=f"render with -o {source} (the file holds every value), not > {source}",
        )
    huge = _past_int64(document)
    if huge is not None:
        # Every engine's integers are int64 at most (Kubernetes' int32 and int64, Vertex's
        # and ml v1's int64); a larger one would only fail later, far from here.
        raise ConfigError(
            "a number past int64",
            source=source,
            path=huge,
            expected=f"an integer from {-(2**63)} to {2**63 - 1}",
        )
    for engine in ENGINES.values():
        if engine.recognizes(document):
            return engine.load(document, source, name)
    shapes = [engine.shape for engine in reversed(list(ENGINES.values()))]
    raise ConfigError(
        "not a job vtrain knows",
        source=source,
        value=sorted(map(str, document))[:6],
        expected=", ".join(shapes[:-1]) + " or " + shapes[-1],
    )


def redaction_mark(document: Any) -> str | None:
    """The path of the first string holding `vtrain.redact`'s mark, or None."""
    return _first(document, lambda v: isinstance(v, str) and HIDDEN in v)


def _past_int64(document: Any) -> str | None:
    return _first(document, lambda v: isinstance(v, int) and not -(2**63) <= v < 2**63)


def _first(document: Any, found: Callable[[Any], bool]) -> str | None:
    """The path of the first value of `document` that is `found`, or None."""
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        value, path = stack.pop()
        if found(value):
            return path or "(document)"
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(value))
    return None

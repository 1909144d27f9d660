"""What a client's models lost of a manifest they read back: unknown fields, a wrong apiVersion.

Both generations of Kubeflow jobs are checked this way: the v1 kinds with the
kubeflow-training models, the TrainJob with kubeflow_trainer_api's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vtrain.errors import Problems


def round_trip_problems(
    document: Mapping[str, Any], kept: Any, *, models: str, api_version: str, problems: Problems
) -> None:
    """What the models dropped from `document` (`kept` is their reading), and a wrong apiVersion."""
    for path, value in dropped(document, kept, ""):
        expected = f"a field of {document.get('kind')} ({models} models)"
        problems.bad(path, "unknown field", value, expected)
    if document.get("apiVersion") != api_version:
        problems.bad("apiVersion", "wrong apiVersion", document.get("apiVersion"), api_version)


def dropped(given: Any, kept: Any, path: str) -> list[tuple[str, Any]]:
    """The fields of `given` that the models' round trip lost."""
    if isinstance(given, Mapping):
        kept = kept if isinstance(kept, Mapping) else {}
        lost = []
        for key, value in given.items():
            where = f"{path}.{key}" if path else str(key)
            if key not in kept and value is not None:
                lost.append((where, key))
            elif key in kept:
                lost.extend(dropped(value, kept[key], where))
        return lost
    if isinstance(given, list) and isinstance(kept, list):
        return [
            x
            for i, (g, k) in enumerate(zip(given, kept, strict=False))
            for x in dropped(g, k, f"{path}[{i}]")
        ]
    return []

"""A CustomJob's Vertex AI Experiments run and TensorBoard: named as not rehearsed (a table)."""

from __future__ import annotations

from typing import Any

import pytest

from vtrain.local.not_rehearsed import not_rehearsed

RUN = "projects/p/locations/r/metadataStores/default/contexts/churn-nightly"
BOARD = "projects/p/locations/r/tensorboards/12"


@pytest.mark.parametrize(
    ("platform", "spec", "named"),
    [
        ("vertex", {"experimentRun": RUN}, [RUN]),
        ("vertex", {"experimentRun": RUN, "tensorboard": BOARD}, [RUN, BOARD]),
        ("vertex", {"tensorboard": BOARD}, [BOARD]),
        ("vertex", {"workerPoolSpecs": []}, []),
        ("vertex", None, []),
        ("aiplatform", {"experimentRun": RUN}, []),
    ],
)
def test_the_services_a_job_names_are_not_rehearsed(
    platform: str, spec: Any, named: list[str]
) -> None:
    lines = [line for line in not_rehearsed(platform, spec, 1) if line.startswith("Vertex AI")]
    assert len(lines) == (1 if named else 0), lines
    for name in named:
        assert name in lines[0]

"""`vtrain submit/render --resume-from CHECKPOINT_DIR`: a new job that continues an old one.

Vertex derives AIP_CHECKPOINT_DIR from the job's own base output folder, so the old job's
folder goes to every replica as VTRAIN_RESUME_FROM, which the core's restore reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from conftest import Result

Run = Callable[..., Result]
IMAGE = ["--image", "gcr.io/p/t:1"]
CMD = ["--", "python", "t.py"]
OLD = "gs://bucket/jobs/old/checkpoints"


def test_every_pool_of_the_job_document_names_the_old_folder(vtrain: Run) -> None:
    done = vtrain(
        "render",
        "vertex",
        "--name",
        "j",
        *IMAGE,
        "--workers",
        "2",
        "--env",
        "A=1",
        "--resume-from",
        OLD,
        "--format",
        "json",
        *CMD,
    )
    assert done.status == 0, done.err
    pools: list[dict[str, Any]] = json.loads(done.out)["jobSpec"]["workerPoolSpecs"]
    assert len(pools) == 2
    for pool in pools:
        assert pool["containerSpec"]["env"] == [
            {"name": "A", "value": "1"},
            {"name": "VTRAIN_RESUME_FROM", "value": OLD},
        ]
    mounted = vtrain(
        "render",
        "vertex",
        "--name",
        "j",
        *IMAGE,
        "--resume-from",
        "/gcs/bucket/old/checkpoints",
        "--format",
        "json",
        *CMD,
    )
    assert mounted.status == 0, mounted.err


def test_every_container_of_a_kubeflow_job_names_it(vtrain: Run) -> None:
    done = vtrain(
        "render",
        "kubeflow",
        "--framework",
        "pytorch",
        "--name",
        "j",
        *IMAGE,
        "--workers",
        "1",
        "--resume-from",
        OLD,
        *CMD,
    )
    assert done.status == 0, done.err
    assert done.out.count(f"- name: VTRAIN_RESUME_FROM\n              value: {OLD}\n") == 2


def test_a_folder_the_replicas_cannot_read_is_refused(vtrain: Run) -> None:
    done = vtrain(
        "render", "vertex", "--name", "j", *IMAGE, "--resume-from", "out/checkpoints", *CMD
    )
    assert done.status == 2
    assert "--resume-from: not a Cloud Storage folder (got 'out/checkpoints')" in done.err
    assert "vtrain local run --resume-from" in done.err


def test_ai_platform_has_no_environment_to_carry_it(vtrain: Run) -> None:
    done = vtrain("render", "aiplatform", "--name", "j", *IMAGE, "--resume-from", OLD, *CMD)
    assert done.status == 2
    assert "VTRAIN_RESUME_FROM" in done.err and "has no environment" in done.err

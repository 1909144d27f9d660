"""`vtrain submit` says what the rehearsal of that very document found: it informs, never blocks."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Result, VertexServer
from targets import rehearsed_vertex

Run = Callable[..., Result]
RENDER = rehearsed_vertex(args=("--epochs", "3"))
SEND = ["--project", "my-project", "--region", "europe-west4"]
# Stands in for `python -m trainer.task`: the chief saves the model; or, `every`, all do.
SCRIPT = """
import json, os, sys
if "every" in sys.argv or json.loads(os.environ["CLUSTER_SPEC"])["task"]["type"] == "workerpool0":
    # AIP_MODEL_DIR is gs://my-bucket/r/model/, as on Vertex: written through its /gcs/ path.
    folder = os.environ["AIP_MODEL_DIR"].replace("gs://", os.environ["VTRAIN_GCS_MOUNT"] + "/", 1)
    open(os.path.join(folder, "model.txt"), "w").write("w")
"""


def rehearse(job: Path, *args: str) -> str:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--job",
            str(job),
            "--output-dir",
            str(job.parent / "out"),
            "--",
            sys.executable,
            str(job.parent / "t.py"),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=job.parent,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_submit_says_whether_and_how_the_document_was_rehearsed(
    vtrain: Run,
    vertex_server: VertexServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the child inherits it
    (tmp_path / "t.py").write_text(SCRIPT)
    job = tmp_path / "job.json"
    job.write_text(vtrain("render", *RENDER).out)
    send = ["submit", "vertex", "--job", str(job), *SEND, "--api-endpoint", vertex_server.address]

    first = vtrain(*send)
    assert first.status == 0, first.err
    assert "vtrain: not rehearsed (`vtrain local run --job FILE -- COMMAND`" in first.err

    assert "\nverdict: not ready: 1 finding\n  [leader] worker-0: " in rehearse(job, "every")
    flagged = vtrain(*send)
    assert flagged.status == 0, flagged.err  # findings inform; the job is sent all the same
    assert "vtrain: rehearsed: not ready: 1 finding (20" in flagged.err
    assert "  [leader] worker-0: wrote " in flagged.err

    assert "\nverdict: ready to submit\n" in rehearse(job)  # then what was not rehearsed
    ready = vtrain(*send)
    assert ready.status == 0 and "vtrain: rehearsed: ready (20" in ready.err, ready.err

    # Another document (one more worker) has no rehearsal on record.
    other = json.loads(job.read_text())
    other["jobSpec"]["workerPoolSpecs"][1]["replicaCount"] = "2"
    job.write_text(json.dumps(other))
    assert "vtrain: not rehearsed" in vtrain(*send).err
    assert len(vertex_server.requests) == 4

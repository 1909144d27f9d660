"""Real TensorFlow on real processes under `vtrain local run`: MWMS, PS, evaluator, resume."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cluster_run import EXAMPLES, clean_env, local_run
from trainjob_file import STATUS, read, trainjob

EXAMPLE = str(EXAMPLES / "keras" / "train.py")
TRUE_WEIGHTS = [i / 8 for i in range(1, 9)]


def weights(run: object, replica: str) -> list[float]:
    return list(json.loads(run.last(replica, "final weights")))  # type: ignore[attr-defined]


@pytest.mark.parametrize("platform", ["vertex", "aiplatform"])
def test_multi_worker_keras_fit_on_a_chief_and_a_worker(platform: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = local_run(out, ["--workers", "1", "--platform", platform], [EXAMPLE, "--epochs", "3"])
    assert run.returncode == 0, run.output
    chief = weights(run, "chief-0")
    assert weights(run, "worker-0") == chief
    assert chief[:8] == pytest.approx(TRUE_WEIGHTS, abs=0.1)

    # Written once, by the chief, where AIP_MODEL_DIR points; and it loads back.
    assert os.listdir(out / "model") == ["model.keras"]
    assert "model saved to" in run.logs["chief-0"] and "model saved" not in run.logs["worker-0"]
    load = (
        "import json, sys, numpy as np, tf_keras\n"
        "model = tf_keras.models.load_model(sys.argv[1])\n"
        "print(json.dumps(np.concatenate([w.reshape(-1) for w in model.get_weights()]).tolist()))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", load, str(out / "model" / "model.keras")],
        env=clean_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(loaded.stdout.splitlines()[-1]) == pytest.approx(chief)
    events = [f for _, _, files in os.walk(out / "logs") for f in files]
    assert any(f.startswith("events.out.tfevents") for f in events)


def test_parameter_server_training_with_two_workers_and_a_ps(tmp_path: Path) -> None:
    # As the TrainJob `vtrain render` writes, on vtrain's TensorFlow runtime: no TF_CONFIG
    # is written by hand; the plugin writes it from the layout each node reads back.
    job = trainjob(
        tmp_path / "job", "tensorflow", ["--workers", "2", "--ps", "1"], [EXAMPLE, "--epochs", "3"]
    )
    assert read(job)["spec"]["runtimeRef"]["name"] == "vtrain-tensorflow"
    run = local_run(tmp_path / "out", job, [])
    assert run.returncode == 0, run.output
    assert STATUS in run.output  # Keras' fit knows its steps: progress, then 100%
    assert weights(run, "chief-0")[:8] == pytest.approx(TRUE_WEIGHTS, abs=0.1)
    # Each server on its own replica's loopback address, as each is a machine of its own.
    served = {
        r: re.findall(r"serving at grpc://(127\.[0-9.]+):", run.logs[r])
        for r in ("worker-0", "worker-1", "ps-0")
    }
    assert all(len(hosts) == 1 for hosts in served.values()), served
    assert len({hosts[0] for hosts in served.values()} - {"127.0.0.1"}) == 3, served
    for replica in ("worker-0", "worker-1", "ps-0"):
        assert "final weights" not in run.logs[replica]
    # Stopped with SIGTERM once the chief succeeded, and exited 0: the normal end of a server.
    stopped = r" +0 +0 \(stopped after the chief's success\)"
    assert re.search(r"^worker-1" + stopped, run.output, re.M), run.output
    assert re.search(r"^ps-0" + stopped, run.output, re.M), run.output
    assert "\nverdict: ready to submit\n" in run.output, run.output


def test_a_side_car_evaluator_evaluates_the_chiefs_checkpoints(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # The side-car is stopped when the chief ends the job, as on the platform; a pause
    # after each epoch gives it time to evaluate every checkpoint, even on a busy machine.
    run = local_run(
        out,
        ["--workers", "1", "--evaluators", "1"],
        [EXAMPLE, "--epochs", "3", "--epoch-delay", "4"],
    )
    assert run.returncode == 0, run.output
    evaluations = re.findall(r"^\d+/\d+ - .*loss: ([\d.]+)", run.logs["evaluator-0"], re.M)
    assert len(evaluations) == 3, run.logs["evaluator-0"][-3000:]
    assert "evaluator-0 finished" in run.output  # it stopped by itself after the third
    # Each evaluation read a later checkpoint of a model that was learning.
    assert float(evaluations[-1]) < float(evaluations[0])
    assert "final weights" not in run.logs["evaluator-0"]
    # Its model's optimizer is built before the first load, so the optimizer state in the
    # chief's files has somewhere to go (before: 2 "Value in checkpoint could not be found"
    # warnings per evaluation).
    assert "could not be found" not in run.logs["evaluator-0"]
    assert any(name.startswith("ckpt-0003") for name in os.listdir(out / "checkpoints" / "eval"))


@pytest.mark.faults  # a fault-matrix cell: `nox -s faults`
def test_a_killed_worker_resumes_at_the_epoch_where_it_stopped(tmp_path: Path) -> None:
    # MWMS as its TrainJob (vtrain's TensorFlow runtime: the JobSet restarts every node).
    # About 6 s to the first epoch, then 1 s an epoch: the kill lands mid-training even if
    # starting takes twice as long on a busy machine.
    command = [EXAMPLE, "--epochs", "14", "--epoch-delay", "1"]
    job = trainjob(tmp_path / "job", "tensorflow", ["--workers", "1"], command)
    run = local_run(tmp_path / "out", [*job, "--kill", "worker:0@14"], [])
    assert run.returncode == 0, run.output
    assert "job restart 1 of" in run.output
    # The chief was stopped for the job restart, by SIGTERM or by SIGKILL after the grace.
    before, _, after = run.logs["chief-0"].partition("[vtrain] chief-0 stopped")
    done_before = [int(e) for e in re.findall(r"^Epoch (\d+)/14", before, re.M)]
    first_after = int(re.findall(r"^Epoch (\d+)/14", after, re.M)[0])
    assert done_before, "the kill must land mid-training"
    assert 1 < first_after <= max(done_before) + 1
    assert weights(run, "worker-0") == weights(run, "chief-0")

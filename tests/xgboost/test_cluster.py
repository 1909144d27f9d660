"""Real XGBoost across real processes on 127.0.0.1, under `vtrain local run`.

Each replica of tests/xgboost/scripts/job.py writes what it saw: its rank, the
tracker's rank for it, its rows, a fingerprint of its model's dump.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import xgboost as xgb
from cluster_run import EXAMPLES, Run, clean_env, local_run, run_alone
from trainjob_file import posted, read, trainjob

# XGBoost warns that it guesses the format of model.bst; it guesses right (UBJSON), as
# Vertex's prediction container relies on.
pytestmark = pytest.mark.filterwarnings("ignore:.*Unknown file format")

SCRIPTS = Path(__file__).parent / "scripts"
JOB = str(SCRIPTS / "job.py")
AS_XGBOOSTJOB = str(SCRIPTS / "as_xgboostjob.py")
EXAMPLE = str(EXAMPLES / "xgboost" / "train.py")
ROUNDS, ROWS = 40, 3000  # as in job.py
# Platform rank of each local replica: chief 0, worker i -> i + 1.
RANKS = {"chief-0": 0, "worker-0": 1, "worker-1": 2}


def run_job(
    tmp_path: Path, options: list[str], command: list[str] | None = None, **env: str
) -> tuple[Run, dict[str, dict]]:
    results = tmp_path / "results"
    results.mkdir(parents=True)
    command = [JOB] if command is None else command
    run = local_run(tmp_path / "out", options, command, RESULTS=str(results), **env)
    found = {p.stem: json.loads(p.read_text()) for p in results.glob("*.json")}
    return run, found


def no_process_left(out: Path) -> list[int]:
    """Processes whose environment names this job's output folder (every replica's does)."""
    marker = f"VTRAIN_OUTPUT_DIR={out}\0".encode()
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker in (entry / "environ").read_bytes():
                    left.append(int(entry.name))
            except OSError:
                pass  # gone, or not ours to read
    return left


def listening(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return True
    except OSError:
        return False


@pytest.mark.parametrize(
    ("platform", "options", "prefix"),
    [
        ("vertex", ["--platform", "vertex"], []),
        # AI Platform's master/worker/ps/evaluator naming, with replicas outside the collective.
        ("aiplatform", ["--platform", "aiplatform", "--ps", "1", "--evaluators", "1"], []),
        # Kubeflow XGBoostJob: MASTER_ADDR/PORT, WORLD_SIZE, RANK, WORKER_ADDRS, WORKER_PORT.
        ("kubeflow", ["--platform", "kubeflow"], [AS_XGBOOSTJOB]),
    ],
)
def test_every_platform_trains_one_model_with_ranks_and_shards_from_the_cluster(
    platform: str, options: list[str], prefix: list[str], tmp_path: Path
) -> None:
    run, found = run_job(tmp_path, ["--workers", "2", *options], [*prefix, JOB])
    assert run.returncode == 0, run.output
    trainers = {name: found[name] for name in RANKS}
    for name, result in trainers.items():
        assert result["platform"] == platform
        # Tracker rank is the platform's rank, so each replica reads the block it meant to.
        assert result["rank"] == result["tracker_rank"] == RANKS[name], name
        assert result["rows"] == [RANKS[name] * 1000, RANKS[name] * 1000 + 1000], name
        assert result["world_size"] == 3
    assert trainers["chief-0"]["source"] == (
        "torch_env" if platform == "kubeflow" else "cluster_spec"
    )
    # Every replica ends with the identical model.
    assert len({r["model"] for r in trainers.values()}) == 1
    assert [n for n, r in trainers.items() if r["is_leader"]] == ["chief-0"]
    # Outside the collective: no rank, no tracker.
    others = {n: r for n, r in found.items() if n not in RANKS}
    assert sorted(others) == (["evaluator-0", "ps-0"] if platform == "aiplatform" else [])
    assert all(r["rank"] is None and r["world_size"] == 0 for r in others.values())

    # The leader's model.bst loads back as the prediction container loads it.
    model = xgb.Booster(model_file=str(tmp_path / "out" / "model" / "model.bst"))
    assert model.num_boosted_rounds() == ROUNDS
    # The tuning metric: the leader's file only, one line per round.
    metrics = sorted(p.name for p in (tmp_path / "out" / "hypertune").iterdir())
    assert metrics == ["chief-0.metrics"]
    lines = (tmp_path / "out" / "hypertune" / "chief-0.metrics").read_text().splitlines()
    assert [json.loads(line)["global_step"] for line in lines] == [str(s) for s in range(1, 41)]
    # The tracker never outlives the job, and no replica is left behind.
    assert not listening(trainers["chief-0"]["tracker"])
    assert no_process_left(tmp_path / "out") == []


def run_alone_job(tmp_path: Path, **env: str) -> dict:
    """job.py as one process with nothing set; what it wrote."""
    results = tmp_path / "alone-results"
    results.mkdir()
    done = subprocess.run(
        [sys.executable, JOB],
        env=clean_env(
            VTRAIN_OUTPUT_DIR=str(tmp_path / "alone"),
            CLOUD_ML_HP_METRIC_FILE=str(tmp_path / "alone" / "m"),
            RESULTS=str(results),
            **env,
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((results / "chief-0.json").read_text())


def test_quality_matches_one_process_on_the_concatenated_shards(tmp_path: Path) -> None:
    run, found = run_job(tmp_path, ["--workers", "2"])
    assert run.returncode == 0, run.output
    alone = run_alone_job(tmp_path)
    assert alone["world_size"] == 1 and alone["rows"] == [0, ROWS] and alone["tracker"] is None
    chief = found["chief-0"]
    # The same rows, split three ways: the quantile sketches merge, so trees differ slightly.
    assert chief["rmse"] == pytest.approx(alone["rmse"], rel=0.05)
    assert chief["rmse"] < 0.5  # it learned: the target's standard deviation is about 1.9


def test_the_scikit_learn_estimator_trains_in_the_collective(tmp_path: Path) -> None:
    run, found = run_job(tmp_path, ["--workers", "2"], API="sklearn")
    assert run.returncode == 0, run.output
    assert len({found[n]["model"] for n in RANKS}) == 1
    assert [found[n]["tracker_rank"] for n in RANKS] == [0, 1, 2]
    assert found["chief-0"]["rmse"] < 0.5
    model = xgb.Booster(model_file=str(tmp_path / "out" / "model" / "model.bst"))
    assert model.num_boosted_rounds() == ROUNDS


def test_the_chief_10_s_late_still_trains(tmp_path: Path) -> None:
    # The workers wait for the tracker's host to resolve, then retry entering the
    # collective until the chief's tracker is up; nobody fails and restarts.
    run, found = run_job(tmp_path, ["--workers", "2", "--max-restarts", "0"], LATE="chief:0:10")
    assert run.returncode == 0, run.output
    assert len({found[n]["model"] for n in RANKS}) == 1
    assert [found[n]["tracker_rank"] for n in RANKS] == [0, 1, 2]


def test_a_worker_killed_mid_training_resumes_to_the_uninterrupted_model(tmp_path: Path) -> None:
    # Worker 0 dies after round 23 on its first run; the job restarts every replica, and
    # every one resumes from the last round the chief committed (every 5 rounds): 20, or
    # 15 if the chief was stopped while its background writer was still committing 20.
    # The restarted chief binds its port again at once (see test_tracker_bound.py). It runs
    # as the TrainJob `vtrain render` writes, on the Trainer's XGBoost runtime: DMLC_* alone
    # (the JobSet restarts every node).
    job = trainjob(tmp_path / "job", "xgboost", ["--workers", "2"], [JOB])
    assert read(job)["spec"]["runtimeRef"]["name"] == "xgboost-distributed"
    run, found = run_job(tmp_path / "killed", job, [], KILL_AT="23")
    assert run.returncode == 0, run.output
    assert "restarting every replica" in run.output and posted(run.output)
    resumed = {found[n]["resumed"] for n in RANKS}
    assert resumed in ({20}, {15}), resumed
    uninterrupted_run, uninterrupted = run_job(tmp_path / "whole", ["--workers", "2"])
    assert uninterrupted_run.returncode == 0, uninterrupted_run.output
    # hist and no subsampling: the resumed model is the uninterrupted one, tree for tree.
    models = {found[n]["model"] for n in RANKS} | {uninterrupted[n]["model"] for n in RANKS}
    assert len(models) == 1
    assert no_process_left(tmp_path / "killed" / "out") == []


def test_a_world_larger_than_the_replicas_fails_after_the_deadline(tmp_path: Path) -> None:
    # An XGBoostJob whose WORLD_SIZE says 4 where 3 replicas run: the tracker waits `wait`
    # (5 s here) for the fourth, then the chief fails with an error that says why. The
    # workers start late: a worker in the collective fails the moment the tracker gives
    # up, and the first failure ends the job (--max-restarts 0), as on the platform, so
    # the chief would be stopped before it says why about half the time.
    run, found = run_job(
        tmp_path,
        ["--workers", "2", "--platform", "kubeflow", "--max-restarts", "0"],
        [AS_XGBOOSTJOB, JOB],
        XGBJOB_WORLD_SIZE="4",
        WAIT="5",
        LATE="worker:0:60,worker:1:60",
    )
    assert run.returncode != 0
    assert found == {}
    chief = run.logs["chief-0"]
    # One line, no traceback: the example ends a vtrain error so (vtrain.one_line_errors()).
    assert "error: WORLD_SIZE: XGBoost's collective did not form within 5 s" in chief, chief
    assert "Traceback" not in chief
    assert "(got 4); expected 4 trainers (the chief and the workers) reaching the tracker" in chief
    assert "Poll timeout" in chief  # the tracker's own reason
    assert no_process_left(tmp_path / "out") == []


def test_the_example_runs_alone_and_on_a_local_cluster(tmp_path: Path) -> None:
    alone = run_alone(tmp_path / "alone", [EXAMPLE, "--rounds", "20", "--nthread", "1"])
    one = json.loads(alone.split("final ", 1)[1].splitlines()[0])  # then where outputs went
    assert one["rounds"] == 20 and (tmp_path / "alone" / "model" / "model.bst").exists()
    run = local_run(
        tmp_path / "out", ["--workers", "2"], [EXAMPLE, "--rounds", "20", "--nthread", "1"]
    )
    assert run.returncode == 0, run.output
    finals = [json.loads(run.last(name, "final")) for name in RANKS]
    assert len({f["model"] for f in finals}) == 1 and finals[0]["rounds"] == 20
    assert finals[0]["rmse"] == pytest.approx(one["rmse"], rel=0.05)
    assert "\nverdict: ready to submit\n" in run.output, run.output  # own disks and addresses
    assert (
        xgb.Booster(model_file=str(tmp_path / "out" / "model" / "model.bst")).num_boosted_rounds()
        == 20
    )

"""Real MXNet (CPU) scheduler, servers and workers on 127.0.0.1, under `vtrain local run`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cluster_run import EXAMPLES, Run, final_parameters, local_run, run_alone
from trainjob_file import posted, read, trainjob

from vtrain.track import merged, read_run

JOB = [str(Path(__file__).parent / "scripts" / "job.py")]
EXAMPLE = str(EXAMPLES / "mxnet" / "train.py")
DIES_ONCE = str(Path(__file__).parent / "scripts" / "dies_once.py")
EXTRA_NOTE = str(Path(__file__).parent / "scripts" / "extra_note.py")


def results(folder: Path) -> dict[str, dict[str, object]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def exited_0(run: Run, replica: str) -> bool:
    """The job's table says `replica` exited 0 (by itself or once stopped)."""
    return re.search(rf"^{replica}\s+\d+\s+0\b", run.output, re.M) is not None


def restarted(run: Run) -> list[str]:
    """The replicas the job's table shows restarted."""
    rows = re.findall(r"^(\w+-\d+)\s+(\d+)\s", run.output, re.M)
    return [name for name, restarts in rows if restarts != "0"]


def alone(tmp_path: Path, args: list[str]) -> list[float]:
    output = run_alone(tmp_path / "alone", [EXAMPLE, *args])
    return final_parameters(output)


@pytest.mark.parametrize("platform", ["vertex", "aiplatform"])
def test_dist_sync_workers_agree_with_one_process_and_worker_0_leads(
    platform: str, tmp_path: Path
) -> None:
    args = ["--epochs", "3", "--steps-per-epoch", "6"]
    run = local_run(
        tmp_path / "out", ["--workers", "2", "--ps", "1", "--platform", platform], [EXAMPLE, *args]
    )
    assert run.returncode == 0, run.output
    first = run.params("worker-0")
    assert run.params("worker-1") == first
    assert first == pytest.approx(alone(tmp_path, args), rel=1e-5, abs=1e-6)
    # The run trained: the loss fell from its first epoch.
    mse = [float(m) for m in re.findall(r"eval mse ([\d.]+)", run.logs["worker-0"])]
    assert mse[-1] < mse[0] / 3
    # MXNet's rank 0 leads, whichever worker it is; the scheduler (the chief) writes nothing.
    leader = next(w for w in ("worker-0", "worker-1") if "leader: True" in run.logs[w])
    assert "rank 0 of 2, leader: True" in run.logs[leader]
    metrics = sorted(p.name for p in (tmp_path / "out" / "hypertune").iterdir())
    assert metrics == [f"{leader}.metrics"]
    assert len((tmp_path / "out" / "hypertune" / metrics[0]).read_text().splitlines()) == 3
    assert (tmp_path / "out" / "model" / "model.params").exists()
    # The scheduler and the server end by themselves, 0. The workers may still be leaving
    # the interpreter when the chief's exit ends the job (the platform stops them then).
    assert exited_0(run, "chief-0") and exited_0(run, "ps-0"), run.output
    assert "serves mxnet until the job ends" in run.logs["chief-0"]


@pytest.mark.parametrize(
    ("options", "flags", "trainers"),
    [
        (["--workers", "2", "--ps", "1"], ["--chief-trains"], ["chief-0", "worker-0", "worker-1"]),
        (["--workers", "2"], ["--servers-beside-workers"], ["worker-0", "worker-1"]),
        (
            ["--workers", "1"],
            ["--chief-trains", "--servers-beside-workers"],
            ["chief-0", "worker-0"],
        ),
    ],
    ids=["chief trains", "servers beside workers", "both"],
)
def test_placements_train_and_leave_no_child_behind(
    options: list[str], flags: list[str], trainers: list[str], tmp_path: Path
) -> None:
    (tmp_path / "r").mkdir()
    run = local_run(tmp_path / "out", options, [*JOB, *flags], RESULTS=str(tmp_path / "r"))
    assert run.returncode == 0, run.output
    # Each child is `python -m` of a module nothing imported before (it was one the package
    # imports: a RuntimeWarning "'vtrain_mxnet.service' found in sys.modules" per child).
    assert "found in sys.modules" not in run.output + "".join(run.logs.values())
    found = results(tmp_path / "r")
    assert sorted(found) == sorted(trainers)
    n = len(trainers)
    assert sorted(r["rank"] for r in found.values()) == list(range(n))
    # Every worker pushed rank + 1, three times, and pulled the sum of all.
    assert {r["sum"] for r in found.values()} == {n * (n + 1) / 2}
    expected_children = set()
    if "--chief-trains" in flags:
        expected_children.add(("chief", "scheduler"))
        assert found["chief-0"]["is_leader"] and found["chief-0"]["leader"] == "chief:0"
    if "--servers-beside-workers" in flags:
        expected_children |= {(t.split("-")[0], "server") for t in trainers}
    children = {(r["role"], c) for r in found.values() for c in r["children"]}  # type: ignore[attr-defined]
    assert children == expected_children
    assert all(r["children_alive_after_close"] == [] for r in found.values())
    assert [name for name, r in found.items() if r["is_leader"]] == (
        ["chief-0"]
        if "--chief-trains" in flags
        else [n for n, r in found.items() if r["rank"] == 0]
    )


def test_workers_wait_for_a_scheduler_that_starts_10_s_late(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    run = local_run(
        tmp_path / "out",
        ["--workers", "2", "--ps", "1"],
        JOB,
        RESULTS=str(tmp_path / "r"),
        LATE="chief:0:10",
    )
    assert run.returncode == 0, run.output
    found = results(tmp_path / "r")
    assert sorted(found) == ["worker-0", "worker-1"]
    assert {r["sum"] for r in found.values()} == {3.0}
    assert not restarted(run), run.output
    assert exited_0(run, "chief-0") and exited_0(run, "ps-0")


def test_a_worker_that_fails_leaves_the_job_at_once(tmp_path: Path) -> None:
    # Its handle leaves MXNet's job without the barrier at exit, which waits for every
    # worker: the others never come there, and the job would hang instead of failing.
    (tmp_path / "r").mkdir()
    run = local_run(
        tmp_path / "out",
        ["--workers", "2", "--ps", "1", "--max-restarts", "0"],
        JOB,
        timeout=120,
        RESULTS=str(tmp_path / "r"),
        FAIL="worker:1",
    )
    assert run.returncode == 1, run.output
    assert "worker-1 exited with 1 after 0 restarts" in run.output, run.output
    assert "RuntimeError: FAIL" in run.logs["worker-1"]


def test_a_killed_worker_resumes_from_the_last_checkpoint(tmp_path: Path) -> None:
    args = ["--epochs", "6", "--steps-per-epoch", "5"]
    # As the TrainJob `vtrain render` writes, on vtrain's MXNet runtime: its layout gives
    # the nodes their roles (the scheduler, workers, a server); the JobSet restarts them all.
    job = trainjob(tmp_path / "job", "mxnet", ["--workers", "2", "--ps", "1"], [DIES_ONCE, *args])
    assert read(job)["spec"]["trainer"]["numNodes"] == 4
    run = local_run(tmp_path / "out", job, [], DIE_AFTER="3")
    assert run.returncode == 0, run.output
    assert "(trainjob)" in run.output and posted(run.output)
    assert "worker-0 exited with SIGKILL; restarting every replica" in run.output, run.output
    assert [int(run.last(w, "resumed from epoch")) for w in ("worker-0", "worker-1")] == [3, 3]
    first = run.params("worker-0")
    assert run.params("worker-1") == first
    # Momentum included: the trainer's states came back with the parameters.
    assert first == pytest.approx(alone(tmp_path, args), rel=1e-5, abs=1e-6)
    # One run across the restart (autolog: handle.report's metric), the resume marked in it.
    (folder,) = (tmp_path / "out" / "tracking").iterdir()
    records = read_run(str(folder))
    assert [step for step, _ in merged(records)["mse"]] == [5, 10, 15, 20, 25, 30]
    assert [(r["attempt"], r["step"]) for r in records if r["kind"] == "resume"] == [(2, 15)]


def test_what_a_save_holds_beside_the_net_comes_back_in_the_resume_on_every_worker(
    tmp_path: Path,
) -> None:
    results, out = tmp_path / "results", tmp_path / "out"
    results.mkdir()
    options = ["--workers", "2", "--ps", "1"]
    first = local_run(out, options, [EXTRA_NOTE, str(results)], timeout=120)
    assert first.returncode == 0, first.output
    assert list(results.iterdir()) == []  # a fresh start: each worker saved, none resumed
    again = local_run(out, options, [EXTRA_NOTE, str(results)], timeout=120)
    assert again.returncode == 0, again.output
    said = [json.loads((results / f"resumed-rank-{r}.json").read_text()) for r in (0, 1)]
    assert [(s["done"], s["extra"]) for s in said] == [(7, {"note": "x"})] * 2
    assert said[0]["uri"].endswith("step-000000000007")
    # The core's one resume line, from the leader alone.
    lines = [line for log in again.logs.values() for line in log.splitlines()]
    assert [line for line in lines if "vtrain: resumed from" in line] == [
        f"vtrain: resumed from {said[0]['uri']} (7 done)"
    ]

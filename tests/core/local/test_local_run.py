"""`vtrain local run` end to end: real processes, real sockets, real signals.

The replicas are plain Python (replicas/replica.py): each records its
environment and start, binds its own address, and meets the chief over TCP.
After every test the `mark` fixture proves that no process is left.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from local_procs import MARK, REPLICA, VTRAIN, alive, group_alive, starts

from vtrain.local import Plan, run_job

Run = Callable[..., subprocess.CompletedProcess[str]]
ESCAPER = str(Path(__file__).parent / "replicas" / "escaper.py")
LEAKS = {
    "TF_CONFIG": '{"leak": 1}',
    "RANK": "99",
    "AIP_MODEL_DIR": "/leak/",
    "CLOUD_ML_JOB_ID": "leak",
}


def replica(out: Path, *args: str) -> list[str]:
    return ["--", sys.executable, REPLICA, str(out), *args]


def envs(out: Path) -> dict[str, dict[str, str]]:
    return {p.stem: json.loads(p.read_text()) for p in (out / "env").glob("*.json")}


def assert_all_gone(out: Path) -> None:
    """Every replica, every child it forked and every process group it had is gone."""
    for path in (out / "starts").iterdir():
        for record in starts(out, path.name):
            assert not alive(record["pid"]), (path.name, record)
            if record["child"]:
                assert not alive(record["child"]), (path.name, record)
            assert not group_alive(record["pgid"]), (path.name, record)


def trainer_rank(name: str) -> int | None:
    role, index = name.split("-")
    return {"chief": 0, "worker": int(index) + 1}.get(role)


@pytest.mark.parametrize("platform", ["vertex", "aiplatform", "kubeflow", "torchrun"])
def test_each_replica_gets_its_platform_environment_and_meets_the_chief(
    vtrain: Run, tmp_path: Path, platform: str
) -> None:
    out, job = tmp_path / "rec", tmp_path / "job"
    roles = [] if platform == "torchrun" else ["--ps", "1", "--evaluators", "1"]
    done = vtrain(
        "--platform",
        platform,
        "--workers",
        "2",
        *roles,
        "--output-dir",
        str(job),
        "--job-id",
        "j1",
        *replica(out),
        **LEAKS,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    all_envs = envs(out)
    names = {"chief-0", "worker-0", "worker-1"} | ({"ps-0", "evaluator-0"} if roles else set())
    assert set(all_envs) == names
    for name in names - {"chief-0"}:  # each met the chief over TCP
        assert f"chief-0 heard from {name}" in done.stdout

    # Every replica bound the address the platform variables gave it: a loopback address of
    # its own (127.0.0.2, 127.0.0.3...), as each machine of a job has one, never 127.0.0.1.
    addresses = {n: starts(out, n)[0]["address"] for n in names}
    if platform != "torchrun":
        hosts = {a.rsplit(":", 1)[0] for a in addresses.values()}
        assert len(hosts) == len(names)
        assert all(h.startswith("127.0.0.") and h != "127.0.0.1" for h in hosts)

    for name, env in all_envs.items():
        assert "leak" not in json.dumps(env), name
        role, index = name.split("-")
        rank = trainer_rank(name)
        tf = json.loads(env["TF_CONFIG"]) if "TF_CONFIG" in env else None
        spec = json.loads(env["CLUSTER_SPEC"]) if "CLUSTER_SPEC" in env else None
        if platform == "vertex":
            pool = {"chief": 0, "worker": 1, "ps": 2, "evaluator": 3}[role]
            assert spec is not None and tf is not None
            assert spec["task"] == {"type": f"workerpool{pool}", "index": int(index), "trial": ""}
            assert spec["cluster"][f"workerpool{pool}"][int(index)] == addresses[name]
            assert set(tf["cluster"]) == {"chief", "worker", "ps"}
            assert tf["task"]["type"] == role
            assert env["AIP_MODEL_DIR"] == f"{job}/model/"
            assert env["AIP_CHECKPOINT_DIR"] == f"{job}/checkpoints/"
            assert env["AIP_TENSORBOARD_LOG_DIR"] == f"{job}/logs/"
            assert env["CLOUD_ML_JOB_ID"] == "j1" and env["CLOUD_ML_PROJECT_ID"].isdigit()
        elif platform == "aiplatform":
            source = {"chief": "master"}.get(role, role)
            assert spec is not None and tf is not None
            assert spec["task"]["type"] == source
            assert spec["cluster"][source][int(index)] == addresses[name]
            assert tf["task"]["type"] == role  # "chief": the job has an evaluator
            assert "AIP_MODEL_DIR" not in env and env["CLOUD_ML_JOB_ID"] == "j1"
        elif platform == "kubeflow":
            assert tf is not None and spec is None
            assert set(tf["cluster"]) == {"chief", "worker", "ps", "evaluator"}
            assert tf["cluster"][role][int(index)] == addresses[name]
        else:
            assert tf is None and spec is None
            assert env["LOCAL_RANK"] == env["RANK"] and env["LOCAL_WORLD_SIZE"] == "3"
            assert env["TORCHELASTIC_RUN_ID"] == "j1"
            assert env["TORCHELASTIC_RESTART_COUNT"] == "0"
        if platform == "aiplatform" or rank is None:
            assert "RANK" not in env and "MASTER_ADDR" not in env
        else:
            assert env["RANK"] == str(rank) and env["WORLD_SIZE"] == "3"
            assert f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}" == addresses["chief-0"]
        assert env["CLOUD_ML_HP_METRIC_FILE"] == f"{job}/hypertune/{name}.metrics"
        log = (job / "replica-logs" / f"{name}.log").read_text()
        assert f"{name} start 1 at" in log
    # Prefixed output and the summary table.
    assert re.search(r"^worker-1 +\| worker-1 start 1 at", done.stdout, re.M)
    assert re.search(r"^replica +restarts +exit status +wall time$", done.stdout, re.M)
    assert "job succeeded (exit status 0)" in done.stdout
    assert_all_gone(out)


def test_trial_folder(vtrain: Run, tmp_path: Path) -> None:
    out, job = tmp_path / "rec", tmp_path / "job"
    done = vtrain("--trial", "7", "--output-dir", str(job), *replica(out))
    assert done.returncode == 0, done.stdout + done.stderr
    env = envs(out)["chief-0"]
    assert env["AIP_MODEL_DIR"] == f"{job}/7/model/"
    assert env["CLOUD_ML_TRIAL_ID"] == "7"
    assert json.loads(env["CLUSTER_SPEC"])["task"]["trial"] == "7"
    assert "TF_CONFIG" not in env  # a job of one is not distributed
    assert (job / "7" / "model").is_dir()
    # Logs per trial too: parallel trials of a study share one --output-dir.
    assert (job / "7" / "replica-logs" / "chief-0.log").is_file()
    assert not (job / "replica-logs").exists()


def test_an_output_dir_that_cannot_be_written_is_a_clear_error(vtrain: Run) -> None:
    done = vtrain("--output-dir", "/proc/vtrain-cannot-exist", "--", sys.executable, "-c", "pass")
    assert done.returncode == 2
    assert "--output-dir: cannot write the job's folders" in done.stderr
    assert "Traceback" not in done.stderr


def test_logs_that_cannot_be_opened_stop_the_started_replicas_with_a_clear_error(
    vtrain: Run, tmp_path: Path
) -> None:
    # The logs are opened once the replicas are on their way: a failure then stops them
    # (the `mark` fixture proves that none is left).
    job, out = tmp_path / "job", tmp_path / "rec"
    job.mkdir()
    (job / "replica-logs").write_text("a file where the logs' folder goes")
    done = vtrain("--workers", "1", "--output-dir", str(job), *replica(out, "--linger", "worker-0"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--output-dir: cannot write the job's folders (File exists)" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("sig", ["KILL", "TERM"])
def test_a_killed_replica_comes_back_on_the_same_address(
    vtrain: Run, tmp_path: Path, sig: str
) -> None:
    out = tmp_path / "rec"
    # worker-0 waits for the kill on its first start. A second kill covers a first that
    # lands before the replica has even recorded its start on a slow machine.
    extra = ["--term-exits-0"] if sig == "TERM" else []
    done = vtrain(
        "--workers",
        "1",
        "--grace",
        "2",
        "--kill",
        f"worker:0@1:{sig}",
        "--kill",
        f"worker:0@4:{sig}",
        *replica(out, "--hang-first", "worker-0", *extra),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    runs = starts(out, "worker-0")
    assert len(runs) >= 2
    assert {r["address"] for r in runs} == {runs[0]["address"]}  # and each bound it
    assert f"sending SIG{sig} to worker-0" in done.stdout
    assert "chief-0 heard from worker-0" in done.stdout
    if sig == "TERM":  # it saw the preemption notice, exited 0, and was restarted anyway
        assert (out / "terms" / "worker-0").exists()
    assert len(starts(out, "chief-0")) == 1
    assert_all_gone(out)


def test_a_preempted_replica_has_the_platforms_notice_to_save_not_the_grace(
    vtrain: Run, tmp_path: Path
) -> None:
    out = tmp_path / "rec"
    # Its SIGTERM save takes 3 s, longer than --grace: a spot VM still gives it 30 s.
    done = vtrain(
        "--workers",
        "1",
        "--grace",
        "0.5",
        "--kill",
        "worker:0@1:TERM",
        *replica(out, "--hang-first", "worker-0", "--term-exits-0", "--term-takes", "3"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sending SIGTERM to worker-0 (a preemption notice: SIGKILL in 30 s" in done.stdout
    assert (out / "terms" / "worker-0").read_text() == "TERM\n"  # the save finished
    assert "SIGKILL" not in done.stdout.split("sending SIGTERM", 1)[1].split("\n", 1)[1]
    assert len(starts(out, "worker-0")) == 2  # then restarted, as the platform does
    assert_all_gone(out)


def test_the_restart_limit_fails_the_job(vtrain: Run, tmp_path: Path) -> None:
    out = tmp_path / "rec"
    done = vtrain("--workers", "1", "--max-restarts", "2", *replica(out, "--fail", "worker-0:99"))
    assert done.returncode == 3, done.stdout + done.stderr
    assert len(starts(out, "worker-0")) == 3
    assert "worker-0 exited with 3 after 2 restarts (--max-restarts 2)" in done.stdout
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines() if "-0 " in line}
    assert rows["worker-0"][1:3] == ["2", "3"]
    assert rows["chief-0"][1:4] == ["0", "SIGTERM", "(stopped)"]
    assert "job failed (exit status 3)" in done.stdout
    assert_all_gone(out)


@pytest.mark.parametrize("whole_job", [False, True])
def test_restart_one_replica_or_the_whole_job(vtrain: Run, tmp_path: Path, whole_job: bool) -> None:
    out = tmp_path / "rec"
    flag = ["--restart-job-on-worker-restart"] if whole_job else []
    done = vtrain("--workers", "1", *flag, *replica(out, "--fail", "worker-0:1"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(starts(out, "worker-0")) == 2
    chief_runs = starts(out, "chief-0")
    assert len(chief_runs) == (2 if whole_job else 1)
    assert {r["address"] for r in chief_runs} == {chief_runs[0]["address"]}
    assert_all_gone(out)


def test_torchrun_restarts_the_group_and_counts_it(vtrain: Run, tmp_path: Path) -> None:
    out = tmp_path / "rec"
    done = vtrain("--platform", "torchrun", "--workers", "1", *replica(out, "--fail", "worker-0:1"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(starts(out, "chief-0")) == 2
    assert envs(out)["chief-0"]["TORCHELASTIC_RESTART_COUNT"] == "1"
    assert_all_gone(out)


@pytest.mark.parametrize(
    ("ignore_term", "status"),
    [
        (False, "SIGTERM (stopped after the chief's success)"),
        (True, "SIGKILL (stopped after the chief's success)"),
    ],
)
def test_ps_and_evaluators_are_stopped_when_the_chief_finishes(
    vtrain: Run, tmp_path: Path, ignore_term: bool, status: str
) -> None:
    out = tmp_path / "rec"
    flags = ["--fork", "--linger", "ps", "evaluator"] + (["--ignore-term"] if ignore_term else [])
    done = vtrain(
        "--workers", "1", "--ps", "1", "--evaluators", "1", "--grace", "0.5", *replica(out, *flags)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("ps-0", "evaluator-0"):
        assert re.search(rf"^{name} +0 +{re.escape(status)} +\d", done.stdout, re.M)
    if ignore_term:
        assert "ps-0 outlived the grace period: SIGKILL" in done.stdout
    assert_all_gone(out)  # the children they forked too


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_everything(
    env: dict[str, str], tmp_path: Path, sig: signal.Signals
) -> None:
    out = tmp_path / "rec"
    proc = subprocess.Popen(
        [
            *VTRAIN,
            "--workers",
            "1",
            "--ps",
            "1",
            "--grace",
            "1",
            *replica(out, "--chief-hang", "--fork", "--linger", "ps", "--ignore-term"),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not all(starts(out, n) for n in ("chief-0", "worker-0", "ps-0")):
            assert time.monotonic() < deadline and proc.poll() is None, "replicas did not start"
            time.sleep(0.05)
        proc.send_signal(sig)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, output
    assert f"{sig.name} received: stopping every replica" in output
    assert f"job interrupted (exit status {128 + sig})" in output
    assert_all_gone(out)


def test_timeout_stops_the_job(vtrain: Run, tmp_path: Path) -> None:
    out = tmp_path / "rec"
    done = vtrain("--workers", "1", "--timeout", "1", *replica(out, "--chief-hang", "--fork"))
    assert done.returncode == 124, done.stdout + done.stderr
    assert "--timeout 1 s reached" in done.stdout
    assert "job timed out (exit status 124)" in done.stdout
    assert_all_gone(out)


def info_lines(stdout: str) -> dict[str, Any]:
    """Replica name -> the `vtrain info --json` document it printed."""
    seen: dict[str, Any] = {}
    for line in stdout.splitlines():
        name, _, text = line.partition(" | ")
        if text.startswith("{"):
            seen[name.strip()] = json.loads(text)
    return seen


EXPECTED_INFO = {
    "chief-0": ("chief", 0, 0),
    "worker-0": ("worker", 0, 1),
    "worker-1": ("worker", 1, 2),
    "ps-0": ("ps", 0, None),
    "evaluator-0": ("evaluator", 0, None),
}


@pytest.mark.parametrize("platform", ["vertex", "aiplatform", "kubeflow", "torchrun"])
def test_done_means_vtrain_info_shows_every_replica_its_role_and_rank(
    vtrain: Run, tmp_path: Path, platform: str
) -> None:
    pytest.importorskip("vtrain.cli.info")
    roles = [] if platform == "torchrun" else ["--ps", "1", "--evaluators", "1"]
    # Each replica prints `vtrain info --json`, then meets the chief: so every one has
    # printed before the chief finishes and the job stops the rest.
    done = vtrain(
        "--platform", platform, "--workers", "2", *roles, *replica(tmp_path / "rec", "--info")
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = info_lines(done.stdout)
    expected = {n: e for n, e in EXPECTED_INFO.items() if roles or e[0] in ("chief", "worker")}
    assert {n: (i["role"], i["index"], i["rank"]) for n, i in seen.items()} == expected
    if platform in ("vertex", "aiplatform"):
        assert {i["platform"] for i in seen.values()} == {platform}


def test_the_literal_done_means_command(vtrain: Run, tmp_path: Path) -> None:
    pytest.importorskip("vtrain.cli.info")
    bin_dir = os.path.dirname(sys.executable)
    done = vtrain(
        "--workers",
        "2",
        "--ps",
        "1",
        "--evaluators",
        "1",
        "--",
        "vtrain",
        "info",
        "--json",
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = info_lines(done.stdout)
    # As on the platform, the job ends when the chief exits: on a busy machine a replica
    # may be stopped before it printed. Whatever printed must be right.
    assert "chief-0" in seen
    for name, info in seen.items():
        assert (info["role"], info["index"], info["rank"]) == EXPECTED_INFO[name]
        assert info["platform"] == "vertex"


def test_the_example_cluster(vtrain: Run, tmp_path: Path) -> None:
    example = Path(__file__).parents[3] / "examples" / "cluster" / "hello_cluster.py"
    job = tmp_path / "job"
    done = vtrain(
        "--workers",
        "2",
        "--ps",
        "1",
        "--evaluators",
        "1",
        "--output-dir",
        str(job),
        "--",
        sys.executable,
        str(example),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    met = json.loads((job / "model" / "hello.json").read_text())["met"]
    assert sorted(met) == ["evaluator-0", "ps-0", "worker-0", "worker-1"]


def test_a_command_that_cannot_start(vtrain: Run, tmp_path: Path) -> None:
    script = tmp_path / "not-a-program"
    script.write_text("no shebang here\n")
    script.chmod(0o755)
    done = vtrain("--workers", "1", "--", str(script))
    assert done.returncode == 2
    assert "vtrain local: error: COMMAND: could not start chief-0: Exec format error" in done.stderr


def test_a_reader_that_leaves_does_not_change_the_outcome(
    env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "rec"
    proc = subprocess.Popen(
        [*VTRAIN, "--workers", "1", *replica(out, "--hang-first", "worker-0")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    # worker-0 hangs until this kill, so the job is still writing after the reader left.
    try:
        deadline = time.monotonic() + 30
        while not starts(out, "worker-0"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(starts(out, "worker-0")[0]["pid"], signal.SIGKILL)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = (tmp_path / "vtrain-output" / "local").glob("*/replica-logs/chief-0.log")
    assert "chief-0 heard from worker-0" in next(log).read_text()


def test_run_job_in_process(tmp_path: Path, mark: str) -> None:
    before = signal.getsignal(signal.SIGINT)
    plan = Plan.from_options(
        [sys.executable, "-c", "print('hi')"], workers=1, output_dir=str(tmp_path / "job")
    )
    stream = io.StringIO()
    result = run_job(plan, stream=stream, environ={**os.environ, MARK: mark})
    assert (result.outcome, result.status) == ("succeeded", 0)
    assert [r.name for r in result.replicas] == ["chief-0", "worker-0"]
    assert result.replicas[0].exit_code == 0
    assert re.search(r"^chief-0 +\| hi$", stream.getvalue(), re.M)
    assert stream.getvalue().endswith(result.table())
    assert signal.getsignal(signal.SIGINT) is before  # the caller's handler is back


def test_run_job_in_process_stops_what_escaped_the_replicas(tmp_path: Path, mark: str) -> None:
    # No subreaper here (the CLI's `reaping`): the job's keeper is the daemons' ancestor.
    out = tmp_path / "rec"
    plan = Plan.from_options(
        [sys.executable, ESCAPER, str(out)], workers=1, output_dir=str(tmp_path / "job")
    )
    result, shown = _run_in_process(plan, mark)
    assert (result.outcome, result.status) == ("succeeded", 0), shown
    daemons = [int(p.name) for p in (out / "escaped").iterdir()]
    assert len(daemons) == 2
    for pid in daemons:
        assert not alive(pid), f"daemon {pid} outlived the job"


def _run_in_process(plan: Plan, mark: str) -> tuple[Any, str]:
    stream = io.StringIO()
    result = run_job(plan, stream=stream, environ={**os.environ, MARK: mark})
    return result, stream.getvalue()


# The chief writes a file and exits 0; the workers end by themselves once they see it.
WAITS_FOR_CHIEF = """
import json, os, sys, time
done = os.path.join(sys.argv[1], "chief-done")
if json.loads(os.environ["CLUSTER_SPEC"])["task"]["type"] == "workerpool0":
    open(done, "w").close()
else:
    while not os.path.exists(done):
        time.sleep(0.01)
    time.sleep(0.2)  # so that the chief has exited first: before the fix they were SIGTERMed
"""


def test_workers_finishing_after_the_chief_end_by_themselves(
    tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A long grace: the test must not depend on how fast a busy machine runs the worker.
    monkeypatch.setattr("vtrain.local.restart_policy.SUCCESS_GRACE_SECONDS", 120.0)
    plan = Plan.from_options(
        [sys.executable, "-c", WAITS_FOR_CHIEF, str(tmp_path)],
        workers=2,
        output_dir=str(tmp_path / "job"),
    )
    result, shown = _run_in_process(plan, mark)
    assert (result.outcome, result.status) == ("succeeded", 0), shown
    assert [(r.exit_code, r.stopped) for r in result.replicas] == [(0, False)] * 3, shown
    assert "SIGTERM" not in shown


def test_replicas_stopped_after_the_chief_succeeded_are_not_shown_as_failures(
    tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("vtrain.local.restart_policy.SUCCESS_GRACE_SECONDS", 0.0)
    up = tmp_path / "worker-up"
    # The chief ends once the worker runs, so that it is stopped in its sleep, not its start.
    worker = f"import time; open({str(up)!r}, 'w').close(); time.sleep(600)"
    chief = f"import os, time\nwhile not os.path.exists({str(up)!r}): time.sleep(0.01)"
    plan = Plan.from_options(
        [sys.executable, "-c", worker],
        workers=1,
        output_dir=str(tmp_path / "job"),
        # The chief's command stands for the job's: each pool names its own.
        role_commands={
            "chief": [sys.executable, "-c", chief],
            "worker": [sys.executable, "-c", worker],
        },
    )
    result, shown = _run_in_process(plan, mark)
    assert (result.outcome, result.status) == ("succeeded", 0), shown
    assert "stopping worker-0 after the chief's success" in shown
    assert re.search(r"^worker-0 +0 +SIGTERM \(stopped after the chief's success\) ", shown, re.M)


def test_a_command_that_fails_at_once_twice_is_not_restarted_again(
    tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Any run counts as immediate here, however busy the machine is.
    monkeypatch.setattr("vtrain.local.restart_policy.IMMEDIATE_SECONDS", 600.0)
    plan = Plan.from_options(
        [sys.executable, str(tmp_path / "no-such-train.py")], output_dir=str(tmp_path / "job")
    )
    result, shown = _run_in_process(plan, mark)
    assert (result.outcome, result.status) == ("failed", 2), shown
    assert shown.count("can't open file") == 2  # not the 6 runs of --max-restarts 5
    assert "chief-0 exited with 2 within 600 s of its start, as its previous run did" in shown
    assert "not restarting it: the command fails before it runs" in shown
    assert result.replicas[0].restarts == 1


def test_a_slow_failure_is_restarted_as_before(
    tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Any run counts as slow here: the platform's restarts apply, whatever the machine's speed.
    monkeypatch.setattr("vtrain.local.restart_policy.IMMEDIATE_SECONDS", 0.0)
    plan = Plan.from_options(
        [sys.executable, "-c", "raise SystemExit(2)"],
        max_restarts=2,
        output_dir=str(tmp_path / "job"),
    )
    result, shown = _run_in_process(plan, mark)
    assert (result.outcome, result.status) == ("failed", 2), shown
    assert result.replicas[0].restarts == 2
    assert "after 2 restarts (--max-restarts 2)" in shown

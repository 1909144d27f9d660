"""The job's outcome is part of the verdict: a job that did not succeed, or a --kill that never
fired, is not ready; what a rehearsal cannot check or rehearse is said, a line each.

Table tests of the pure pieces (`last_words`, the `job` and `kill` checks over
evidence, `not_rehearsed` over job documents), then real `vtrain local run`
processes: a crash, a missing script, a missing framework, a keeper that dies,
a kill that never fires, --no-model, AI Platform's words.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vtrain.local.checks import judge
from vtrain.local.checks.job import job, kill, last_words
from vtrain.local.evidence import Evidence, Run
from vtrain.local.not_rehearsed import NCCL, NETWORK, not_rehearsed
from vtrain.local.result import FAILED, INTERRUPTED, SUCCEEDED, TIMED_OUT
from vtrain.local.verdict import CHECKS, Finding, Verdict

Vtrain = Callable[..., subprocess.CompletedProcess[str]]


def evidence(tmp_path: Path, **facts: Any) -> Evidence:
    ev = Evidence(
        hosts={"chief-0": "127.0.0.2", "worker-0": "127.0.0.3"},
        ports={"chief-0": 1, "worker-0": 2},
        separate_hosts=True,
        model_dir=str(tmp_path / "model") + "/",
        checkpoint_dir=str(tmp_path / "checkpoints") + "/",
        metric_files={},
        metric_id=None,
    )
    for name, value in facts.items():
        setattr(ev, name, value)
    return ev


def run(name: str, code: int, tail: list[str], refused: str | None = None) -> Run:
    r = Run(name, 0, None, "/nonexistent.record", None)
    r.exit_code, r.tail, r.refused = code, tail, refused
    return r


# -- last_words ---------------------------------------------------------------------------

TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/w/train.py", line 3, in <module>',
    "    import torch",
    "    ^^^^^^^^^^^^",
    "ModuleNotFoundError: No module named 'torch'",
    "",
]


@pytest.mark.parametrize(
    ("tail", "said"),
    [
        (["boom\n"], "boom"),
        (TRACEBACK, "ModuleNotFoundError: No module named 'torch'"),
        (["error: bad", "    ^^^^  ", "   "], "error: bad"),
        (["x" * 300], "x" * 197 + "..."),
        ([], None),
        (["", "  ", "~~^~~"], None),
    ],
)
def test_the_last_words_are_the_last_line_that_says_something(
    tail: list[str], said: str | None
) -> None:
    assert last_words(tail) == said


@given(
    st.lists(st.text(max_size=250), max_size=8),
    st.lists(st.sampled_from(["", "  ", "    ^^^^", "~~^~~", "\t"]), max_size=3),
)
def test_blank_and_caret_lines_never_hide_the_last_words(tail: list[str], after: list[str]) -> None:
    assert last_words([*tail, "the last words", *after]) == "the last words"
    assert last_words([*tail, *after]) == last_words(tail)
    said = last_words(tail)
    assert said is None or (len(said) <= 200 and said.removesuffix("...") in "".join(tail))


# -- the job check --------------------------------------------------------------------------

CRASHED = run("chief-0", 1, ["boom"])
STOPPED = run("worker-0", -15, ["training"])


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        ({"succeeded": True, "outcome": SUCCEEDED}, None),
        (
            {
                "outcome": FAILED,
                "reason": "chief-0 exited with 1 after 0 restarts (--max-restarts 0)",
                "ended_by": "chief-0",
                "runs": [CRASHED, STOPPED],
            },
            (
                "chief-0",
                "the job failed: exited with 1 after 0 restarts (--max-restarts 0), its last "
                "line 'boom': it would fail on Vertex too",
            ),
        ),
        (
            {
                "outcome": FAILED,
                "reason": "worker-0 exited with 3 after 0 restarts (--max-restarts 0)",
                "ended_by": "worker-0",
                "platform": "aiplatform",
                "runs": [run("worker-0", 3, [])],
            },
            (
                "worker-0",
                "the job failed: exited with 3 after 0 restarts (--max-restarts 0), it printed "
                "nothing: it would fail on AI Platform too",
            ),
        ),
        (
            {
                "outcome": FAILED,
                "reason": "vtrain's keeper process (pid 7) ended unexpectedly (EOF)",
                "runs": [STOPPED],
            },
            (
                "vtrain",
                "the job failed (vtrain's keeper process (pid 7) ended unexpectedly (EOF)): "
                "the rehearsal ended before the job did",
            ),
        ),
        (
            {"outcome": TIMED_OUT, "reason": "--timeout 3 s reached"},
            (
                "chief-0",
                "the job timed out (--timeout 3 s reached) before the chief finished: the "
                "rehearsal never saw it succeed",
            ),
        ),
        (
            {"outcome": INTERRUPTED, "reason": "vtrain received SIGINT"},
            (
                "chief-0",
                "the job was interrupted (vtrain received SIGINT) before the chief finished: "
                "the rehearsal never saw it succeed",
            ),
        ),
        # A refusal of the arguments is the `args` check's to say, with what to do.
        (
            {
                "outcome": FAILED,
                "reason": "chief-0's script refused its arguments (x)",
                "ended_by": "chief-0",
                "runs": [run("chief-0", 2, ["usage: ..."], refused="x")],
            },
            None,
        ),
    ],
)
def test_a_job_that_did_not_succeed_is_a_job_finding(
    tmp_path: Path, facts: dict[str, Any], expected: tuple[str, str] | None
) -> None:
    found = job(evidence(tmp_path, **facts))
    assert [(f.replica, f.detail) for f in found] == ([expected] if expected else [])
    assert all(f.check == "job" and f.fix for f in found)


# -- the kill check -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kills", "fired", "seconds", "expected"),
    [
        (["worker:0@30"], ["worker:0@30"], 40.0, []),
        (
            ["worker:0@30"],
            [],
            0.2,
            [
                (
                    "worker-0",
                    "--kill worker:0@30 never fired: the job ended after 0.2 s, so the lost "
                    "machine and the restart that follows were not rehearsed",
                )
            ],
        ),
        (
            ["chief:0@5:TERM"],
            [],
            9.0,
            [
                (
                    "chief-0",
                    "--kill chief:0@5:TERM never fired: at 5 s chief-0 was not running, or the "
                    "job was ending, so the preemption and the restart that follows were not "
                    "rehearsed",
                )
            ],
        ),
        # The same kill twice fired once: the second never did.
        (["chief:0@1", "chief:0@1"], ["chief:0@1"], 0.5, [("chief-0", None)]),
    ],
)
def test_a_kill_that_never_fired_is_a_kill_finding(
    tmp_path: Path,
    kills: list[str],
    fired: list[str],
    seconds: float,
    expected: list[tuple[str, str | None]],
) -> None:
    found = kill(evidence(tmp_path, kills=kills, fired=fired, seconds=seconds))
    assert [f.replica for f in found] == [who for who, _ in expected]
    for finding, (_, detail) in zip(found, expected, strict=True):
        assert detail is None or finding.detail == detail
        assert finding.check == "kill" and finding.fix


# -- what is not rehearsed --------------------------------------------------------------------

T4_POOL = {
    "machineSpec": {
        "machineType": "n1-standard-8",
        "acceleratorType": "NVIDIA_TESLA_T4",
        "acceleratorCount": 1,
    },
    "replicaCount": "1",
}
CPU_POOL = {"machineSpec": {"machineType": "n1-highmem-16"}, "replicaCount": "2"}
TPU_POOL = {"machineSpec": {"machineType": "cloud-tpu", "acceleratorType": "TPU_V3"}}
TFJOB = {
    "spec": {
        "tfReplicaSpecs": {
            "Chief": {
                "template": {
                    "spec": {
                        "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"},
                        "containers": [{"resources": {"limits": {"memory": "16Gi"}}}],
                    }
                }
            }
        }
    }
}
CHIEF_PODS = "spec.tfReplicaSpecs.Chief.template.spec"
ACCELERATOR = "accelerators: {}; the replicas ran on this machine without them"
MACHINES = "machine types and memory: {}; the replicas shared this machine's CPUs and memory"


@pytest.mark.parametrize(
    ("platform", "job_document", "replicas", "expected"),
    [
        ("vertex", None, 1, []),
        ("vertex", None, 3, [NETWORK]),
        (
            "vertex",
            {"workerPoolSpecs": [T4_POOL]},
            1,
            [
                ACCELERATOR.format("NVIDIA_TESLA_T4:1 (workerpool0)"),
                MACHINES.format("n1-standard-8 (workerpool0)"),
            ],
        ),
        (
            "vertex",
            {"workerPoolSpecs": [T4_POOL, CPU_POOL]},
            3,
            [
                ACCELERATOR.format("NVIDIA_TESLA_T4:1 (workerpool0)"),
                MACHINES.format("n1-standard-8 (workerpool0), n1-highmem-16 (workerpool1)"),
                NETWORK,
                NCCL,
            ],
        ),
        # A CPU job runs the same collectives there as here: no NCCL line.
        (
            "vertex",
            {"workerPoolSpecs": [CPU_POOL, CPU_POOL]},
            3,
            [MACHINES.format("n1-highmem-16 (workerpool0), n1-highmem-16 (workerpool1)"), NETWORK],
        ),
        (
            "vertex",
            {"workerPoolSpecs": [TPU_POOL, {}]},
            2,
            [
                ACCELERATOR.format("TPU_V3:1 (workerpool0)"),
                MACHINES.format("cloud-tpu (workerpool0)"),
                NETWORK,
            ],
        ),
        (
            "aiplatform",
            {
                "scaleTier": "CUSTOM",
                "masterType": "n1-standard-4",
                "masterConfig": {"acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": 2}},
                "workerType": "n1-standard-8",
                "workerCount": 0,
            },
            1,
            [
                ACCELERATOR.format("NVIDIA_TESLA_T4:2 (master)"),
                MACHINES.format("n1-standard-4 (master)"),
            ],
        ),
        (
            "aiplatform",
            {"scaleTier": "BASIC_GPU"},
            1,
            [
                ACCELERATOR.format("a GPU (scale tier BASIC_GPU)"),
                MACHINES.format("scale tier BASIC_GPU"),
            ],
        ),
        (
            "kubeflow",
            TFJOB,
            2,
            [
                ACCELERATOR.format(f"nvidia-tesla-t4 ({CHIEF_PODS})"),
                MACHINES.format(f"memory 16Gi ({CHIEF_PODS}.containers[0])"),
                NETWORK,
                NCCL,
            ],
        ),
        ("torchrun", {"anything": 1}, 2, [NETWORK]),
    ],
)
def test_what_the_document_asks_of_machines_is_not_rehearsed(
    platform: str, job_document: Any, replicas: int, expected: list[str]
) -> None:
    assert not_rehearsed(platform, job_document, replicas) == expected


def test_the_verdict_says_what_it_did_not_check_or_rehearse() -> None:
    finding = Finding("job", "chief-0", "the job failed", "fix it")
    verdict = Verdict((finding,), ("a note",), ("native writes",), ("the network's speed",))
    assert verdict.text() == (
        "verdict: not ready: 1 finding\n"
        "  [job] chief-0: the job failed; fix it\n"
        "  (note: a note)\n"
        "  not checked: native writes\n"
        "  not rehearsed: the network's speed\n"
    )
    ready = Verdict((), (), (), ("GPU collectives (NCCL)",))
    assert ready.ready and ready.text().startswith("verdict: ready to submit\n")
    assert json.loads(ready.to_json()) == {
        "ready": True,
        "findings": [],
        "notes": [],
        "not_checked": [],
        "not_rehearsed": ["GPU collectives (NCCL)"],
    }


def test_the_job_and_kill_findings_come_first(tmp_path: Path) -> None:
    ev = evidence(
        tmp_path,
        outcome=TIMED_OUT,
        reason="--timeout 1 s reached",
        kills=["chief:0@9"],
        seconds=1.0,
        not_checked=["x", "x"],
        not_rehearsed=[NETWORK],
    )
    verdict = judge(ev)
    assert CHECKS[:2] == ("job", "kill")
    assert [f.check for f in verdict.findings] == ["job", "kill"]
    assert verdict.not_checked == ("x",) and verdict.not_rehearsed == (NETWORK,)


# -- real rehearsals ------------------------------------------------------------------------


def rehearse(vtrain: Vtrain, tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    done = vtrain(
        "--output-dir", str(tmp_path / "out"), "--verdict-json", str(tmp_path / "v.json"), *args
    )
    assert "verdict: " in done.stdout, done.stdout + done.stderr
    return json.loads((tmp_path / "v.json").read_text()), done.stdout


def findings(verdict: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in verdict["findings"] if f["check"] == check]


CHIEF_SAVES = """
import json, os
if json.loads(os.environ["CLUSTER_SPEC"])["task"]["type"] == "workerpool0":
    open(os.path.join(os.environ["AIP_MODEL_DIR"], "m.txt"), "w").write("w")
"""
SCRIPTS = {
    "crash": ('raise SystemExit("boom")\n', "its last line 'boom'"),
    "framework": (
        "import torch_that_is_not_here\n",
        "ModuleNotFoundError: No module named 'torch_that_is_not_here'",
    ),
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_job_that_fails_is_not_ready(vtrain: Vtrain, tmp_path: Path, script: str) -> None:
    text, said = SCRIPTS[script]
    (tmp_path / "s.py").write_text(text)
    verdict, stdout = rehearse(
        vtrain, tmp_path, "--workers", "1", "--max-restarts", "0", "--", sys.executable, "s.py"
    )
    assert verdict["ready"] is False, stdout
    (found,) = findings(verdict, "job")
    assert found["replica"] in ("chief-0", "worker-0"), stdout
    assert "exited with 1" in found["detail"] and said in found["detail"], found
    assert "\nverdict: not ready: " in stdout and "  [job] " in stdout, stdout


def test_a_missing_script_is_not_ready(vtrain: Vtrain, tmp_path: Path) -> None:
    verdict, stdout = rehearse(vtrain, tmp_path, "--", sys.executable, "missing.py")
    (found,) = findings(verdict, "job")
    assert verdict["ready"] is False and found["replica"] == "chief-0", stdout
    assert "can't open file" in found["detail"] and "missing.py" in found["detail"], found


def test_a_keeper_that_dies_is_not_ready(vtrain: Vtrain, tmp_path: Path) -> None:
    # The replicas are the keeper's children: the chief kills it, as an OOM killer might.
    (tmp_path / "s.py").write_text("import os, time\nos.kill(os.getppid(), 9)\ntime.sleep(30)\n")
    verdict, stdout = rehearse(vtrain, tmp_path, "--", sys.executable, "s.py")
    (found,) = findings(verdict, "job")
    assert verdict["ready"] is False and found["replica"] == "vtrain", stdout
    assert "keeper process" in found["detail"], found


def test_a_kill_after_the_job_ended_is_not_ready(vtrain: Vtrain, tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text(CHIEF_SAVES)
    verdict, stdout = rehearse(
        vtrain, tmp_path, "--workers", "1", "--kill", "worker:0@30", "--", sys.executable, "s.py"
    )
    assert [f["check"] for f in verdict["findings"]] == ["kill"], stdout
    assert verdict["findings"][0]["replica"] == "worker-0"
    assert verdict["findings"][0]["detail"].startswith(
        "--kill worker:0@30 never fired: the job ended after "
    )
    assert verdict["not_rehearsed"] == [NETWORK], stdout
    assert f"\n  not rehearsed: {NETWORK}\n" in stdout


NO_MODEL = "import os\nprint('evaluated: 0.9')\n"
EVERY_REPLICA_SAVES = (
    "import os\nopen(os.path.join(os.environ['AIP_MODEL_DIR'], 'm.txt'), 'w').write('w')\n"
)


def test_a_job_without_a_model_by_design_is_ready_with_no_model(
    vtrain: Vtrain, tmp_path: Path
) -> None:
    (tmp_path / "s.py").write_text(NO_MODEL)
    verdict, stdout = rehearse(vtrain, tmp_path, "--", sys.executable, "s.py")
    (found,) = verdict["findings"]
    assert found["check"] == "leader" and "no replica wrote the model" in found["detail"]
    assert "--no-model" in found["detail"], found

    verdict, stdout = rehearse(vtrain, tmp_path, "--no-model", "--", sys.executable, "s.py")
    assert verdict["ready"] is True, stdout


def test_no_model_still_finds_a_model_every_replica_writes(vtrain: Vtrain, tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text(EVERY_REPLICA_SAVES)
    verdict, stdout = rehearse(
        vtrain, tmp_path, "--workers", "1", "--no-model", "--", sys.executable, "s.py"
    )
    (found,) = findings(verdict, "leader")
    assert found["replica"] == "worker-0" and "which chief-0 wrote too" in found["detail"], stdout


def test_ai_platform_findings_speak_of_the_job_dir(vtrain: Vtrain, tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text(NO_MODEL)
    args = ("--platform", "aiplatform", "--", sys.executable, "s.py")
    verdict, stdout = rehearse(vtrain, tmp_path, *args)
    (found,) = findings(verdict, "leader")
    assert "under --job-dir (" in found["detail"], found
    assert "AIP_MODEL_DIR" not in found["detail"] and "Vertex" not in found["detail"], found

    # A model anywhere in the job's folder is AI Platform's model: ready.
    (tmp_path / "s.py").write_text(
        "import os\nopen(os.path.join(os.environ['VTRAIN_OUTPUT_DIR'], 'model.bst'), 'w')\n"
    )
    verdict, stdout = rehearse(vtrain, tmp_path, *args)
    assert verdict["ready"] is True, stdout

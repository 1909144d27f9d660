"""The rehearse-then-submit blocks of the README and the docs, typed as written, with what runs
here.

Those blocks are tagged `skip` (a Google Cloud project, a bucket, an image);
here each one runs from the page's own text in a folder holding a script that
records what it was given (a real `trainer/task.py`, the quickstart's twin):
the render and the rehearsal as written, `vtrain submit` against a local
Vertex (`--api-endpoint`), and a reclaim at 3 s, not 60 s.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import VertexServer
from readme_blocks import ROOT, Block, blocks, run_block


def recording_task(arguments: str = "") -> str:
    """A module that takes `arguments` (argparse lines), records what it was given and its
    AIP_MODEL_DIR, saves a model there from the chief (as a real task does, or the verdict
    would say none did), and waits (the chief) for every replica's record, so that the
    job's end stops none of them before it has written."""
    return f"""\
import argparse, json, os, sys, time
import vtrain
import vtrain.storage

{arguments}
info = vtrain.ClusterInfo.from_env()
records = os.environ["TWIN_RECORDS"]
os.makedirs(records, exist_ok=True)
with open(os.path.join(records, f"{{info.role}}-{{info.index}}.json"), "w") as f:
    json.dump({{"argv": sys.argv, "model": os.environ.get("AIP_MODEL_DIR")}}, f)
if info.is_chief:
    vtrain.storage.open_location(os.environ["AIP_MODEL_DIR"]).write_bytes("model.pt", b"w")
    deadline = time.monotonic() + 60
    while len(os.listdir(records)) < int(os.environ["TWIN_REPLICAS"]):
        if time.monotonic() > deadline:
            sys.exit(f"only {{os.listdir(records)}} recorded")
        time.sleep(0.05)
"""


# The module the README's command names, with the flags its document and study pass.
RECORDING_TASK = recording_task("""\
parser = argparse.ArgumentParser(prog="task.py")
parser.add_argument("--epochs", type=int, required=True)
parser.add_argument("--learning_rate", type=float)
parser.add_argument("--global-batch-size", type=int)
parser.parse_args()""")

# A spot job's module: 40 steps an epoch, 0.05 s each; on SIGTERM it commits its step and
# exits 143, and the restarted run resumes from that commit.
CHECKPOINTING_TASK = """\
import argparse, time
import vtrain

with vtrain.PreemptionHandler(grace=20) as preempted:  # first: a reclaim can come at any time
    parser = argparse.ArgumentParser(prog="task.py")
    parser.add_argument("--epochs", type=int, required=True)
    args = parser.parse_args()
    role = vtrain.ClusterInfo.from_env().role
    manager = vtrain.CheckpointManager()
    step = 0
    checkpoint = manager.restore()  # None until a step is committed
    if checkpoint is not None:
        with checkpoint:
            step = int(checkpoint.files["step"])
        print(f"{role}: resumed from step {step}", flush=True)
    while step < args.epochs * 40:
        time.sleep(0.05)
        step += 1
        if preempted:
            manager.save(step, {"step": str(step).encode()})
            print(f"{role}: committed step {step} on SIGTERM", flush=True)
        preempted.exit_if_requested()
    print(f"{role}: trained {step} steps", flush=True)
"""


def readme_block(containing: str) -> Block:
    """The one command block of the README and the docs whose text holds `containing`."""
    found = [b for b in blocks() if containing in b.text]
    assert len(found) == 1, (containing, [str(b) for b in found])
    assert (found[0].marker or "").startswith("skip ("), "a block that runs needs no twin"
    return found[0]


def a_project_with(folder: Path, task: str) -> None:
    """`folder` as the README's reader has it: a package `trainer` with `task.py`."""
    (folder / "trainer").mkdir()
    (folder / "trainer" / "__init__.py").write_text("")
    (folder / "trainer" / "task.py").write_text(task)


def local(block: Block, server: VertexServer, **replace: str) -> Block:
    """`block` with `submit` sent to the local Vertex (and each `replace` key by its value)."""
    text = block.text
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    text = re.sub(
        r"^(vtrain submit vertex .*)$",
        rf"\1 --api-endpoint {server.address} --poll 0.05",
        text,
        flags=re.MULTILINE,
    )
    return Block(block.language, text, block.marker, block.line)


def test_the_rehearse_then_submit_block(
    vertex_server: VertexServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = readme_block("vtrain local run --job job.yaml -- python -m trainer.task")
    a_project_with(tmp_path, RECORDING_TASK)
    shutil.copy(ROOT / "examples" / "pytorch" / "study.yaml", tmp_path / "study.yaml")
    vertex_server.states = ["JOB_STATE_PENDING", "JOB_STATE_RUNNING", "JOB_STATE_SUCCEEDED"]
    # Passed on to the replicas, as a user's own variables are.
    monkeypatch.setenv("TWIN_RECORDS", str(tmp_path / "records"))
    monkeypatch.setenv("TWIN_REPLICAS", "5")
    done = run_block(local(block, vertex_server), tmp_path, timeout=180)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    # The command after --job stands in for the document's program; its args follow, once.
    shown = re.search(r"^vtrain local: command: (.*)$", done.stderr, re.MULTILINE)
    assert shown, done.stderr
    assert shown[1].startswith("python -m trainer.task --epochs 3 --learning_rate=")
    assert shown[1].endswith("(the document's args after your command)")
    records = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "records").glob("*.json")}
    assert sorted(records) == ["chief-0", "evaluator-0", "ps-0", "worker-0", "worker-1"]
    for record in records.values():
        argv = record["argv"]
        args = argv[1:]
        assert argv[0].endswith("trainer/task.py")
        assert args[:2] == ["--epochs", "3"] and args.count("--epochs") == 1, args
        assert "-m" not in args and "trainer.task" not in args, args
        assert [a.split("=")[0] for a in args[2:]] == ["--learning_rate", "--global-batch-size"]
    # ... and the very document went to Vertex, which said it succeeded.
    assert [kind for kind, _ in vertex_server.requests][0] == "hyperparameterTuningJobs"
    assert "JOB_STATE_SUCCEEDED" in done.stderr


def test_the_spot_block_rehearses_a_reclaim_that_commits_and_resumes(
    vertex_server: VertexServer, tmp_path: Path
) -> None:
    from google.cloud import aiplatform_v1

    block = readme_block("vtrain local run --job spot.yaml --kill chief:0@60:TERM")
    a_project_with(tmp_path, CHECKPOINTING_TASK)
    # 3 s, not 60: the first run trains 6 s (3 epochs of 40 steps of 0.05 s), so the
    # reclaim finds it training.
    done = run_block(local(block, vertex_server, **{"@60:TERM": "@3:TERM"}), tmp_path, timeout=180)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    assert "note: a job on Spot VMs: a reclaim sends SIGTERM" in done.stderr
    assert "--kill chief:0@3:TERM: sending SIGTERM to chief-0" in done.stdout
    chief = "\n".join(re.findall(r"^chief-0 +\| (.*)$", done.stdout, re.MULTILINE))
    committed = re.findall(r"^chief: committed step (\d+) on SIGTERM$", chief, re.MULTILINE)
    resumed = re.findall(r"^chief: resumed from step (\d+)$", chief, re.MULTILINE)
    assert len(committed) == 1 and resumed == committed, output
    assert chief.endswith("chief: trained 120 steps"), output
    # The summary: the chief ran twice (one restart) and ended well.
    assert re.search(r"^chief-0 +1 +0 ", done.stdout, re.M), done.stdout
    sent = vertex_server.requests[0][1].custom_job.job_spec.scheduling
    assert sent.strategy == aiplatform_v1.Scheduling.Strategy.SPOT


def test_the_quickstart_block_renders_rehearses_and_submits(
    vertex_server: VertexServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = readme_block("vtrain local run --job quickstart.yaml -- python")
    (tmp_path / "quickstart_twin.py").write_text(recording_task())  # the quickstart takes no flags
    vertex_server.states = ["JOB_STATE_PENDING", "JOB_STATE_RUNNING", "JOB_STATE_SUCCEEDED"]
    monkeypatch.setenv("TWIN_RECORDS", str(tmp_path / "records"))
    monkeypatch.setenv("TWIN_REPLICAS", "3")
    twin = local(block, vertex_server, **{"examples/quickstart.py": "quickstart_twin.py"})
    done = run_block(twin, tmp_path, timeout=180)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    assert "\nverdict: ready to submit\n" in done.stdout, output
    records = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "records").glob("*.json")}
    assert sorted(records) == ["chief-0", "worker-0", "worker-1"]
    # The rehearsal wrote gs://my-bucket/run1 as Vertex would: AIP_MODEL_DIR under it.
    assert {r["model"] for r in records.values()} == {"gs://my-bucket/run1/model/"}
    assert [kind for kind, _ in vertex_server.requests][0] == "customJobs"
    assert "rehearsed: ready" in output and "JOB_STATE_SUCCEEDED" in done.stderr

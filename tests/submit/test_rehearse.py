"""`vtrain local run --job`: each rendered job, rehearsed, gives every replica what the platform
documents for it. Real processes; each replica reads itself back with `vtrain info --json`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import targets
from conftest import Result
from targets import render_args

Run = Callable[..., Result]
RECORD = str(Path(__file__).parent / "replicas" / "record.py")
# The rendered command is `python -m trainer.task --epochs 3`: the local command (record.py)
# stands in for the program, `python -m trainer.task`, and the program's args follow.
JOB_ARGS = ["--epochs", "3"]
SIZES = {
    "vertex": 5,
    "vertex_study": 5,
    "vertex_reduction": 3,
    "aiplatform": 5,
    "aiplatform_study": 5,
    "tfjob": 5,
    "pytorchjob": 3,
    "xgboostjob": 3,
}
STUDY_FLAGS = ("--learning_rate=", "--layers=", "--batch_size=", "--optimizer=")


def rehearse(
    vtrain: Run, tmp_path: Path, target: str, *extra: str
) -> tuple[dict[str, Any], Path, dict[str, Any]]:
    """Render `target` to a file, rehearse it, and return (records by replica, output dir, job)."""
    job = tmp_path / "job.yaml"
    done = vtrain(*render_args(target, "yaml", "-o", str(job)))
    assert done.status == 0, done.err
    import yaml

    document = yaml.safe_load(job.read_text())
    rec, out = tmp_path / "rec", tmp_path / "out"
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--job",
            str(job),
            "--output-dir",
            str(out),
            "--job-id",
            "rehearsal-1",
            *extra,
            "--",
            sys.executable,
            RECORD,
            str(rec),
            str(SIZES[target]),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    records = {p.stem: json.loads(p.read_text()) for p in rec.glob("*.json")}
    assert len(records) == SIZES[target], sorted(records)
    return records, out, document


def names(target: str) -> set[str]:
    roles = {"chief-0", "worker-0", "worker-1"}
    return roles | ({"ps-0", "evaluator-0"} if SIZES[target] == 5 else set())


@pytest.mark.parametrize("target", ["vertex", "vertex_study", "vertex_reduction"])
def test_vertex_replicas_get_cluster_spec_pools_dirs_and_the_trial(
    vtrain: Run, tmp_path: Path, target: str
) -> None:
    records, out, document = rehearse(vtrain, tmp_path, target)
    assert set(records) == names(target)
    tuning = target == "vertex_study"
    spec = document["trialJobSpec" if tuning else "jobSpec"]
    # The document's output is gs://: the replicas get the bucket's URIs, as on Vertex, served
    # by the rehearsal's emulator (--output-dir keeps the logs, disks and objects).
    uri = (spec.get("baseOutputDirectory") or {}).get("outputUriPrefix", "").rstrip("/")
    local = out / "1" if tuning else out
    base = (f"{uri}/1" if tuning else uri) if uri.startswith("gs://") else local
    for r in records.values():
        info, env = r["info"], r["env"]
        spec_env = json.loads(env["CLUSTER_SPEC"])
        pools = {
            "chief": "workerpool0",
            "worker": "workerpool1",
            "ps": "workerpool2",
            "evaluator": "workerpool3",
        }
        assert spec_env["task"]["type"] == pools[info["role"]]
        assert sorted(spec_env["cluster"]) == sorted(
            {pools[n.split("-")[0]] for n in names(target)}
        )
        assert spec_env["job"] == spec, "the replicas see the very spec that is submitted"
        assert (info["platform"], info["source"]) == ("vertex", "cluster_spec")
        assert info["dirs"] == {
            "model": f"{base}/model/",
            "checkpoint": f"{base}/checkpoints/",
            "tensorboard": f"{base}/logs/",
        }
        tf = json.loads(env["TF_CONFIG"])
        assert sorted(tf["cluster"]) == (
            ["chief", "ps", "worker"] if SIZES[target] == 5 else ["chief", "worker"]
        )
        assert r["args"][:2] == JOB_ARGS
        if tuning:
            assert info["trial_id"] == "1" and env["CLOUD_ML_TRIAL_ID"] == "1"
            assert spec_env["task"]["trial"] == "1"
            assert env["CLOUD_ML_HP_METRIC_TAG"] == "loss"
            assert [a.split("=")[0] + "=" for a in r["args"][2:]] == list(STUDY_FLAGS)
        else:
            assert info["trial_id"] is None and r["args"] == JOB_ARGS
    if target == "vertex":
        assert records["worker-1"]["env"]["MODE"] == "train"
        assert records["worker-1"]["info"]["rank"] == 2
        assert records["evaluator-0"]["info"]["rank"] is None


def test_a_later_trial_gets_its_own_flags_and_folder(vtrain: Run, tmp_path: Path) -> None:
    records, out, _ = rehearse(vtrain, tmp_path, "vertex_study", "--trial", "3")
    chief = records["chief-0"]
    assert chief["info"]["trial_id"] == "3"
    uri = targets.JOB[targets.JOB.index("--output-dir") + 1]
    assert chief["info"]["dirs"]["model"] == f"{uri}/3/model/"
    from targets import STUDY

    from vtrain.tune.samplers import RandomSampler
    from vtrain.tune.study_file import read_study

    study = read_study(STUDY)
    drawn = RandomSampler(study, 0).suggest(3)
    assert drawn is not None
    by_id = {p.parameter_id: p for p in study.parameters}
    assert chief["args"][2:] == [by_id[k].flag(v) for k, v in drawn.items()]


@pytest.mark.parametrize("target", ["aiplatform", "aiplatform_study"])
def test_aiplatform_replicas_get_master_in_cluster_spec_and_chief_in_tf_config(
    vtrain: Run, tmp_path: Path, target: str
) -> None:
    records, out, document = rehearse(vtrain, tmp_path, target)
    assert set(records) == names(target)
    for r in records.values():
        spec = json.loads(r["env"]["CLUSTER_SPEC"])
        tf = json.loads(r["env"]["TF_CONFIG"])
        assert sorted(spec["cluster"]) == ["evaluator", "master", "ps", "worker"]
        # useChiefInTfConfig: TF_CONFIG names the master "chief", as TF2 needs.
        assert "chief" in tf["cluster"] and "master" not in tf["cluster"]
        assert "evaluator" not in tf["cluster"]
        assert spec["job"]["useChiefInTfConfig"] is True
        assert spec["job"]["jobDir"] == str(out)
        assert r["info"]["platform"] == "aiplatform"
        # jobDir reaches the program as --job-dir, after the job's args, as the service passes it.
        assert r["args"][:3] == [*JOB_ARGS, f"--job-dir={out}"]
    assert json.loads(records["chief-0"]["env"]["TF_CONFIG"])["task"]["type"] == "chief"
    assert json.loads(records["chief-0"]["env"]["CLUSTER_SPEC"])["task"]["type"] == "master"
    if target == "aiplatform_study":
        chief = records["chief-0"]
        assert chief["info"]["trial_id"] == "1"
        assert json.loads(chief["env"]["CLUSTER_SPEC"])["task"]["trial"] == "1"
        assert [a.split("=")[0] + "=" for a in chief["args"][3:]] == list(STUDY_FLAGS)
    else:
        assert all(len(r["args"]) == 3 for r in records.values())


def test_an_aiplatform_job_without_job_dir_passes_no_job_dir(vtrain: Run, tmp_path: Path) -> None:
    job = tmp_path / "config.yaml"
    done = vtrain(
        "render",
        "aiplatform",
        "--name",
        "j",
        "--image",
        "gcr.io/p/t:1",
        "--workers",
        "1",
        "-o",
        str(job),
        "--",
        "--epochs",
        "3",
    )
    assert done.status == 0, done.err
    rec = tmp_path / "rec"
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--job",
            str(job),
            "--output-dir",
            str(tmp_path / "out"),
            "--",
            sys.executable,
            RECORD,
            str(rec),
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for path in rec.glob("*.json"):
        record = json.loads(path.read_text())
        assert record["args"] == ["--epochs", "3"]
        assert "jobDir" not in json.loads(record["env"]["CLUSTER_SPEC"])["job"]


def test_a_tfjob_puts_every_role_in_tf_config(vtrain: Run, tmp_path: Path) -> None:
    records, out, _ = rehearse(vtrain, tmp_path, "tfjob")
    assert set(records) == names("tfjob")
    for name, r in records.items():
        tf = json.loads(r["env"]["TF_CONFIG"])
        assert sorted(tf["cluster"]) == ["chief", "evaluator", "ps", "worker"]
        assert f"{tf['task']['type']}-{tf['task']['index']}" == name
        assert "RANK" not in r["env"] and "CLUSTER_SPEC" not in r["env"]
        assert r["env"]["MODE"] == "train"
        # The manifest's gs:// folders are this rehearsal's.
        assert r["info"]["dirs"]["model"] == f"{out}/model/"
        assert r["args"] == JOB_ARGS


@pytest.mark.parametrize("target", ["pytorchjob", "xgboostjob"])
def test_pytorch_and_xgboost_jobs_get_rank_and_world_size(
    vtrain: Run, tmp_path: Path, target: str
) -> None:
    records, _, _ = rehearse(vtrain, tmp_path, target)
    assert set(records) == names(target)
    for name, r in records.items():
        env = r["env"]
        assert "TF_CONFIG" not in env
        assert env["WORLD_SIZE"] == "3"
        expected = 0 if name == "chief-0" else int(name.split("-")[1]) + 1
        assert env["RANK"] == str(expected) == str(r["info"]["rank"])
        assert env["MASTER_PORT"] == records["chief-0"]["info"]["address"].rsplit(":", 1)[1]


def test_a_job_whose_image_runs_its_entrypoint_needs_a_local_command(tmp_path: Path) -> None:
    job = tmp_path / "job.json"
    job.write_text(
        json.dumps(
            {
                "workerPoolSpecs": [
                    {
                        "machineSpec": {"machineType": "n1-standard-4"},
                        "replicaCount": "1",
                        "containerSpec": {"imageUri": "gcr.io/p/t:1", "args": ["--x=1"]},
                    }
                ]
            }
        )
    )
    ran = subprocess.run(
        [sys.executable, "-m", "vtrain", "local", "run", "--job", str(job), "--ps", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 2 and "--ps: the job file sets this" in ran.stderr
    ran = subprocess.run(
        [sys.executable, "-m", "vtrain", "local", "run", "--job", str(job)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 2
    assert "COMMAND: the chief pool runs its image's ENTRYPOINT" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_an_xgboostjob_names_its_workers_in_worker_addrs_and_worker_port(
    vtrain: Run, tmp_path: Path
) -> None:
    records, _, _ = rehearse(vtrain, tmp_path, "xgboostjob")
    master = records["chief-0"]["info"]["address"]
    env = records["chief-0"]["env"]
    hosts = env["WORKER_ADDRS"].split(",")
    assert len(hosts) == 2 and len(set(hosts)) == 2, "one host per worker, as each pod has"
    workers = [f"{h}:{env['WORKER_PORT']}" for h in hosts]
    for name, r in records.items():
        # The operator sets both on every pod, the master's too.
        assert (r["env"]["WORKER_ADDRS"], r["env"]["WORKER_PORT"]) == (
            env["WORKER_ADDRS"],
            env["WORKER_PORT"],
        )
        # ... and vtrain reads them back as the workers' addresses.
        info = r["info"]
        assert (info["platform"], info["source"]) == ("kubeflow", "torch_env")
        assert info["cluster"] == {"chief": [master], "worker": workers}
        if name != "chief-0":
            assert info["address"] == workers[info["index"]]


def test_a_pytorchjob_has_no_worker_addrs(vtrain: Run, tmp_path: Path) -> None:
    records, _, _ = rehearse(vtrain, tmp_path, "pytorchjob")
    for r in records.values():
        assert "WORKER_ADDRS" not in r["env"] and "WORKER_PORT" not in r["env"]
        assert r["info"]["cluster"]["worker"] == [None, None]


def test_another_worker_count_rehearses_a_resubmission_of_the_document(tmp_path: Path) -> None:
    # Resubmitted with fewer workers (spot VMs gone, say), the job meets in the same folders.
    pool = {"machineSpec": {"machineType": "n1-standard-4"}, "containerSpec": {"imageUri": "i"}}
    job = tmp_path / "job.json"
    job.write_text(
        json.dumps(
            {"workerPoolSpecs": [{**pool, "replicaCount": "1"}, {**pool, "replicaCount": "3"}]}
        )
    )
    seen = tmp_path / "seen"
    seen.mkdir()
    script = (
        "import json, os, pathlib; s = json.loads(os.environ['CLUSTER_SPEC']); "
        f"pathlib.Path({str(seen)!r}, s['task']['type'] + str(s['task']['index'])).write_text("
        "str(len(s['cluster'].get('workerpool1', []))))"
    )
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtrain",
            "local",
            "run",
            "--job",
            str(job),
            "--workers",
            "1",
            "--output-dir",
            str(tmp_path / "out"),
            "--",
            sys.executable,
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 workers instead of the document's 3" in ran.stderr
    found = {p.name: p.read_text() for p in seen.iterdir()}
    assert found == {"workerpool0" + "0": "1", "workerpool1" + "0": "1"}

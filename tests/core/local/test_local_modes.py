"""Right in every mode (issue 41): AI Platform's --job-dir reaches the script as the platform
passes it, and a trial's verdict looks at the folders that trial's replicas were given.

(A Katib trial, named by its manifest's env, is rehearsed in tests/submit, where the
Kubeflow packages are: test_katib_trial_folders.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vtrain.context import given_dirs, output_dirs

Vtrain = Callable[..., subprocess.CompletedProcess[str]]

ARGV = "import json, sys; print('ARGV', json.dumps(sys.argv[1:]), flush=True)"


def argvs(stdout: str) -> dict[str, list[str]]:
    """What each replica printed after ARGV: its arguments."""
    found = {}
    for line in stdout.splitlines():
        name, _, said = line.partition("|")
        if said.strip().startswith("ARGV "):
            found[name.strip()] = json.loads(said.strip()[len("ARGV ") :])
    return found


@pytest.mark.parametrize("trial", [None, "2"])
def test_ai_platform_passes_the_job_dir_after_the_job_s_args(
    vtrain: Vtrain, tmp_path: Path, trial: str | None
) -> None:
    out = tmp_path / "out"
    options = ["--platform", "aiplatform", "--workers", "1", "--ps", "1"]
    options += ["--trial", trial] if trial else []
    done = vtrain(
        "--output-dir", str(out), *options, "--", sys.executable, "-c", ARGV, "--epochs=3"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The job's jobDir, a trial's too: AI Platform passes the same folder to every trial.
    expected = ["--epochs=3", f"--job-dir={out}"]
    assert argvs(done.stdout) == dict.fromkeys(["chief-0", "worker-0", "ps-0"], expected)


@pytest.mark.parametrize("platform", ["vertex", "kubeflow", "torchrun"])
def test_other_platforms_pass_the_command_as_it_is(
    vtrain: Vtrain, tmp_path: Path, platform: str
) -> None:
    done = vtrain(
        "--output-dir",
        str(tmp_path / "out"),
        "--platform",
        platform,
        "--workers",
        "1",
        "--",
        sys.executable,
        "-c",
        ARGV,
        "--epochs=3",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert argvs(done.stdout) == dict.fromkeys(["chief-0", "worker-0"], ["--epochs=3"])


# -- a trial's folders ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "model_dir"),
    [
        # What the platform sets wins (Vertex; a Kubeflow manifest's env).
        ({"AIP_MODEL_DIR": "/given/model/", "VTRAIN_OUTPUT_DIR": "/o"}, "/given/model/"),
        # The trial the replica is told, however it is told: a Katib trial's env.
        ({"VTRAIN_OUTPUT_DIR": "/o", "CLOUD_ML_TRIAL_ID": "3"}, "/o/3/model/"),
        (
            {
                "VTRAIN_OUTPUT_DIR": "/o",
                "CLUSTER_SPEC": json.dumps(
                    {
                        "cluster": {"master": ["h:1"]},
                        "task": {"type": "master", "index": 0, "trial": "7"},
                    }
                ),
            },
            "/o/7/model/",
        ),
        ({"VTRAIN_OUTPUT_DIR": "/o", "CLOUD_ML_JOB_ID": "j"}, "/o/model/"),
        # An environment vtrain cannot read: the job's layout (the replica says what is wrong).
        ({"VTRAIN_OUTPUT_DIR": "/o", "AIP_DATA_FORMAT": "parquet"}, "/base/5/model/"),
    ],
)
def test_the_evidence_s_folders_are_those_the_replica_is_given(
    environ: dict[str, str], model_dir: str
) -> None:
    dirs = given_dirs(environ, "/base", "5")
    assert dirs["AIP_MODEL_DIR"] == model_dir
    assert set(dirs) == set(output_dirs("/base"))


CHIEF_SAVES = """
import os
from vtrain import ClusterInfo
from vtrain.context import RunContext
if ClusterInfo.from_env().is_chief:
    folder = RunContext.from_env().model_dir
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, "model.txt"), "w").write("m")
"""


def rehearse(vtrain: Vtrain, tmp_path: Path, *args: str) -> dict[str, Any]:
    done = vtrain(
        "--output-dir", str(tmp_path / "out"), "--verdict-json", str(tmp_path / "v.json"), *args
    )
    assert done.returncode == 0, done.stdout + done.stderr
    verdict: dict[str, Any] = json.loads((tmp_path / "v.json").read_text())
    return verdict


@pytest.mark.parametrize("platform", ["vertex", "aiplatform"])
def test_a_trial_s_model_in_its_own_folder_is_ready(
    vtrain: Vtrain, tmp_path: Path, platform: str
) -> None:
    (tmp_path / "s.py").write_text(CHIEF_SAVES)
    verdict = rehearse(
        vtrain, tmp_path, "--platform", platform, "--trial", "3", "--", sys.executable, "s.py"
    )
    assert (tmp_path / "out" / "3" / "model" / "model.txt").exists()
    assert [f for f in verdict["findings"] if f["check"] == "leader"] == [], verdict

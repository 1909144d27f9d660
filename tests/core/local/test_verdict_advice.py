"""Advice that runs: every snippet a finding prints, pasted into a script, works.

The findings' code comes from one place (`vtrain.local.checks.snippets`). The
test takes each snippet out of the findings as they are printed, pastes it into
a script that runs in a real interpreter as a job's chief, and checks what it
did: the leader's branch ran, the metric reached the metric file under its tag.
It runs with the core's own handle, and with every framework's that is installed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vtrain.local.checks import snippets
from vtrain.local.checks.leader import leader
from vtrain.local.checks.metric import metric
from vtrain.local.evidence import Evidence, Run

TAG = "accuracy"
# Each framework's handle, configured as a script does (`vtrain.plugins.get(NAME).configure()`).
FRAMEWORKS = {
    "pytorch": "torch",
    "tensorflow": "tensorflow",
    "xgboost": "xgboost",
    "mxnet": "mxnet",
}


def printed() -> list[str]:
    """The code in backticks of every finding that gives advice in code, as printed."""
    model = Path(os.environ.get("TMPDIR", "/tmp")) / "model"
    ev = Evidence(
        hosts={"chief-0": "127.0.0.2", "worker-0": "127.0.0.3"},
        ports={},
        separate_hosts=True,
        model_dir=f"{model}/",
        checkpoint_dir="/nonexistent/checkpoints/",
        metric_files={},
        metric_id=TAG,
    )
    for name in ev.hosts:
        run = Run(name, 0, None, "/nonexistent.record", None)
        run.seen = [("write", str(model / "model.pt"))]
        ev.runs.append(run)
    findings = [*leader(ev), *metric(ev)]
    assert {f.check for f in findings} == {"leader", "metric"}
    return [code for f in findings for code in re.findall(r"`([^`]+)`", f.line())]


def test_the_findings_print_every_snippet() -> None:
    shown = set(printed())
    assert shown == {s.format(tag=TAG) for s in snippets.SNIPPETS}


def handle_for(framework: str) -> str:
    if framework == "core":
        return (
            "from vtrain.plugins.handle import Handle\n"
            "info = vtrain.ClusterInfo.from_env()\n"
            "handle = Handle(info, is_leader=info.is_chief)\n"
        )
    return f"handle = vtrain.plugins.get({framework!r}).configure()\n"


@pytest.mark.parametrize("framework", ["core", *FRAMEWORKS])
def test_each_printed_snippet_runs(framework: str, tmp_path: Path) -> None:
    # Asked of a fresh interpreter: here, tests/tensorflow/ would pass for TensorFlow.
    module = FRAMEWORKS.get(framework)
    if (
        module
        and subprocess.run([sys.executable, "-c", f"import {module}"], cwd=tmp_path).returncode
    ):
        pytest.skip(f"{module} is not installed")
    for n, code in enumerate(sorted(set(printed()))):
        did = tmp_path / f"did-{n}"
        metrics = tmp_path / f"metrics-{n}"
        # An `if ...:` snippet gets a body that leaves a mark; a call is pasted as it is.
        body = f"    open({str(did)!r}, 'w').close()\n" if code.endswith(":") else ""
        script = tmp_path / f"paste-{n}.py"
        script.write_text(
            "import vtrain\n" + handle_for(framework) + "value = 0.75\n" + code + "\n" + body
        )
        done = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            env={**os.environ, "CLOUD_ML_HP_METRIC_FILE": str(metrics)},
        )
        assert done.returncode == 0, f"{code}\n{done.stderr}"
        if body:
            assert did.exists(), f"the chief did not take the branch of `{code}`"
        else:
            entries = [json.loads(line) for line in metrics.read_text().splitlines()]
            assert [e[TAG] for e in entries] == ["0.75"], textwrap.shorten(str(entries), 200)

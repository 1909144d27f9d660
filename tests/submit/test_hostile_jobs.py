"""Job files and flags that cannot run (issue 32): refused in one line, before anything starts.

Each refusal names the document's field (or the flag), exits 2, prints no job
banner and creates no folder. A document past vtrain's bounds (an alias bomb,
100k-deep JSON) is refused by the rehearsal, by submit and by render within a
200 MiB address space; a printed document that hides credentials as *** is
refused by submit and by the rehearsal, naming -o; a tuning job whose ranges
hold zeros, which proto3 leaves out, rehearses as the study says.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bombs import alias_chain
from conftest import Result, VertexServer

Run = Callable[..., Result]
IMAGE = ["--image", "gcr.io/p/t:1"]


def pool(**container: Any) -> dict[str, Any]:
    return {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {"imageUri": "gcr.io/p/t:1", "command": ["python"], **container},
    }


def custom_job(*pools: dict[str, Any]) -> dict[str, Any]:
    return {"displayName": "j", "jobSpec": {"workerPoolSpecs": list(pools)}}


def pytorchjob(**pod: Any) -> dict[str, Any]:
    spec = {"replicas": 1, "template": {"spec": pod}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "j"},
        "spec": {"pytorchReplicaSpecs": {"Master": spec}, "runPolicy": {}},
    }


BOMB = (
    "displayName: bomb\n" + alias_chain(9, "lol") + "jobSpec:\n"
    "  workerPoolSpecs:\n"
    "    - machineSpec: {machineType: n1-standard-4}\n"
    "      replicaCount: 1\n"
    "      containerSpec: {imageUri: gcr.io/p/t:1, args: *x8}\n"
)


def _limited(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`vtrain ARGV` in a child limited to 200 MiB of address space."""
    limit = 200 << 20

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    # The timeout only keeps a regression from hanging the suite; the bounds are counts.
    return subprocess.run(
        [sys.executable, "-m", "vtrain", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        preexec_fn=cap,
        timeout=120,
    )


def test_an_alias_bomb_is_refused_everywhere_in_one_line_within_200_mib(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(BOMB)
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    study = BOMB.split("jobSpec:")[0] + "metrics: [{metric_id: m, goal: MINIMIZE}]\n"
    study += "parameters: [{parameter_id: p, categorical_value_spec: {values: *x8}}]\n"
    (tmp_path / "study.yaml").write_text(study.replace("displayName: bomb\n", ""))
    runs = {
        "local": ["local", "run", "--job", "bomb.yaml", "--", "true"],
        "local ": ["local", "run", "--job", "deep.json", "--", "true"],
        "submit": ["submit", "vertex", "--job", "bomb.yaml", "--project", "p12345"],
        "render": ["render", "vertex", *IMAGE, "--study", "study.yaml", "--", "python", "t.py"],
    }
    for command, argv in runs.items():
        done = _limited(argv, tmp_path)
        assert done.returncode == 2, (command, done.stderr[-2000:])
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.startswith(f"vtrain {command.strip()}: error: "), done.stderr
        assert "more than" in done.stderr and done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bomb.yaml", "deep.json", "study.yaml"]


# document, what the refusal says (after the file's name)
REFUSED = [
    (
        custom_job(pool(args=["t.py"], env=[{"name": "X", "value": "a\0b"}])),
        "jobSpec.workerPoolSpecs[0].containerSpec.env[0].value: a NUL character (\\0) in a string",
    ),
    (
        custom_job(pool(args=["t.py", "a\0b"])),
        "jobSpec.workerPoolSpecs[0].containerSpec.args[1]: a NUL character (\\0) in a string",
    ),
    (
        custom_job(pool(args=["t.py"], env=[{"name": "OK", "value": "1"}, {"name": "A=B"}])),
        "jobSpec.workerPoolSpecs[0].containerSpec.env[1].name: not a variable name (got 'A=B'); "
        "expected a C identifier, as Vertex requires",
    ),
    # Proto3 JSON leaves the empty name out: the entry has no name at all.
    (
        custom_job(pool(args=["t.py"], env=[{"name": "", "value": "1"}])),
        "jobSpec.workerPoolSpecs[0].containerSpec.env[0].name: not a variable name (got None)",
    ),
    (
        pytorchjob(containers=[{"name": "pytorch", "image": "i", "env": [{"name": "A=B"}]}]),
        "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].env[0].name: not a variable "
        "name (got 'A=B'); expected letters, digits, '_', '-' and '.', as Kubernetes requires",
    ),
    (
        custom_job({**pool(args=["t.py"]), "replicaCount": 2**64}),
        "jobSpec.workerPoolSpecs[0].replicaCount: a number past int64; expected an integer from ",
    ),
    (
        custom_job(pool(args=["t.py"]), {**pool(args=["t.py"]), "replicaCount": "100000"}),
        "jobSpec.workerPoolSpecs[1].replicaCount: too many replicas to rehearse on this machine "
        "(got {'worker': 100000}); expected at most ",
    ),
    (
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": "t"},
            "spec": {
                "runtimeRef": {"name": "torch-distributed"},
                "trainer": {"image": "i", "env": [{"name": "A=B", "value": "1"}]},
            },
        },
        "spec.trainer.env[0].name: not a variable name (got 'A=B')",
    ),
    (
        pytorchjob(containers=[]),
        "spec.pytorchReplicaSpecs.Master.template.spec.containers: a pod without containers",
    ),
    (
        pytorchjob(containers=[None]),
        "spec.pytorchReplicaSpecs.Master.template.spec.containers[0]: not a container",
    ),
    (
        pytorchjob(containers=[{"name": "pytorch", "image": "i", "command": "python t.py"}]),
        "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].command: not a list of "
        "strings",
    ),
]


@pytest.mark.parametrize(("document", "said"), REFUSED)
def test_a_job_no_process_can_run_is_refused_before_anything_starts(
    vtrain: Run, tmp_path: Path, document: dict[str, Any], said: str
) -> None:
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    out = tmp_path / "out"
    done = vtrain(
        "local", "run", "--job", str(path), "--output-dir", str(out), "--", sys.executable, "t.py"
    )
    assert done.status == 2, done.err
    assert f"{path}: {said}" in done.err, done.err
    # One error line, and no job banner (the rehearsal may first say which command it runs).
    assert [line for line in done.err.splitlines() if "error" in line] == [
        line for line in done.err.splitlines() if line.startswith("vtrain local: error: ")
    ] and done.err.count("error") == 1
    assert " | job " not in done.err + done.out and done.out == ""
    assert not out.exists()


def test_deep_json_is_one_line_for_submit_too(vtrain: Run, tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"jobSpec": ' + "[" * 100_000 + "]" * 100_000 + "}")
    done = vtrain("submit", "vertex", "--job", str(path), "--project", "p12345")
    assert done.status == 2
    assert done.err == (
        f"vtrain submit: error: {path}: nested more than 64 levels deep; expected a document "
        "vtrain can read: at most 1 MiB, 50000 values (aliases expanded), 1000 aliases and 64 "
        "levels of nesting\n"
    )


def test_a_manifest_with_anchors_within_the_bounds_is_rehearsed(
    vtrain: Run, tmp_path: Path
) -> None:
    record = tmp_path / "seen"
    path = tmp_path / "job.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {{name: anchored}}
        spec:
          pytorchReplicaSpecs:
            Master:
              replicas: 1
              template: &pod
                spec:
                  containers:
                    - name: pytorch
                      image: gcr.io/p/t:1
                      command: [{sys.executable}, -c]
                      args: ["import os; open('{record}-' + os.environ['RANK'], 'w')"]
            Worker: {{replicas: 1, template: *pod}}
          runPolicy: {{}}
    """)
    )
    done = vtrain("local", "run", "--job", str(path), "--output-dir", str(tmp_path / "out"))
    assert done.status == 0, done.err
    assert sorted(p.name for p in tmp_path.glob("seen-*")) == ["seen-0", "seen-1"]


def test_a_label_or_variable_given_twice_is_refused_naming_both(vtrain: Run) -> None:
    done = vtrain(
        "render",
        "vertex",
        *IMAGE,
        "--label",
        "k=v",
        "--label",
        "k=w",
        "--env",
        "DB_PASSWORD=hunter2",
        "--env",
        "DB_PASSWORD=hunter3",
        "--label",
        "same=1",
        "--label",
        "same=1",
        "--",
        "python",
        "t.py",
    )
    assert done.status == 2
    assert done.err == (
        "vtrain render: error: 2 problems:\n"
        "  --env: DB_PASSWORD is given twice, with two values; expected each variable once\n"
        "  --label: key 'k' is given twice (got 'k=v and k=w'); expected each key once\n"
    )


def test_a_package_whose_build_requirement_cannot_be_installed_is_named(
    vtrain: Run, tmp_path: Path
) -> None:
    package = tmp_path / "pkg"
    (package / "trainer").mkdir(parents=True)
    (package / "trainer" / "__init__.py").write_text("")
    (package / "pyproject.toml").write_text(
        textwrap.dedent("""\
        [build-system]
        requires = ["hatchling", "vtrain-test-no-such-requirement>=1"]
        build-backend = "hatchling.build"
        [project]
        name = "trainer"
        version = "0.1"
    """)
    )
    done = vtrain(
        "render",
        "vertex",
        "--python-package",
        str(package),
        "--python-module",
        "trainer.task",
        "--executor-image",
        "gcr.io/p/exec:1",
        "--staging",
        "gs://b/s",
    )
    assert done.status == 2, done.err
    assert done.err.startswith(
        "vtrain render: error: --python-package: cannot install the package's build requirement "
        "vtrain-test-no-such-requirement>=1 ([build-system] requires): "
    ), done.err
    assert done.err.count("\n") == 1


def test_a_printed_job_that_hides_credentials_is_refused_and_the_written_one_is_sent(
    vtrain: Run, vertex_server: VertexServer, tmp_path: Path
) -> None:
    argv = [
        "vertex",
        "--name",
        "j",
        *IMAGE,
        "--env",
        "DB_PASSWORD=hunter2",
        "--",
        "python",
        "t.py",
        "--token=abc123",
    ]
    printed = vtrain("render", *argv)  # stdout is not a terminal here, as in `> job.yaml`
    assert printed.status == 0 and "hunter2" not in printed.out
    assert printed.err == (
        "vtrain: note: credentials are printed as ***; -o FILE writes the real values "
        "(a printed copy cannot be sent)\n"
    )
    piped = tmp_path / "piped.yaml"
    piped.write_text(printed.out)
    send = ["--project", "p12345", "--api-endpoint", vertex_server.address]
    for command in (
        ["submit", "vertex", "--job", str(piped), *send],
        [
            "local",
            "run",
            "--job",
            str(piped),
            "--output-dir",
            str(tmp_path / "o"),
            "--",
            sys.executable,
            "-c",
            "pass",
        ],
    ):
        done = vtrain(*command)
        assert done.status == 2
        assert done.err.endswith(
            f"{piped}: jobSpec.workerPoolSpecs[0].containerSpec.env[0].value: holds ***, where a "
            "printed document hides a credential; expected the real value. Hint: render with "
            f"-o {piped} (the file holds every value), not > {piped}\n"
        ), done.err
    assert vertex_server.requests == [] and not (tmp_path / "o").exists()
    written = tmp_path / "job.yaml"
    assert vtrain("render", *argv[:-4], "-o", str(written), *argv[-4:]).status == 0
    done = vtrain("submit", "vertex", "--job", str(written), *send)
    assert done.status == 0, done.err
    container = vertex_server.requests[0][1].custom_job.job_spec.worker_pool_specs[0].container_spec
    assert [(e.name, e.value) for e in container.env] == [("DB_PASSWORD", "hunter2")]
    assert list(container.args) == ["t.py", "--token=abc123"]


ZEROS = textwrap.dedent("""\
    metrics: [{metric_id: loss, goal: MINIMIZE}]
    parameters:
      - parameter_id: lr
        double_value_spec: {min_value: 0, max_value: 0}
      - parameter_id: shift
        double_value_spec: {min_value: -1, max_value: 0}
      - parameter_id: layers
        integer_value_spec: {min_value: 0, max_value: 0}
        conditional_parameter_specs:
          - parent_int_values: {values: [0]}
            parameter_spec: {parameter_id: width, discrete_value_spec: {values: [0]}}
      - parameter_id: flag
        categorical_value_spec: {values: ["0"]}
    algorithm: RANDOM_SEARCH
    max_trial_count: 1
    max_failed_trial_count: 0
""")


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_a_tuning_job_with_zeros_rehearses_as_its_study_says(
    vtrain: Run, tmp_path: Path, fmt: str
) -> None:
    study = tmp_path / "study.yaml"
    study.write_text(ZEROS)
    job = tmp_path / f"hp.{fmt}"
    done = vtrain(
        "render",
        "vertex",
        *IMAGE,
        "--study",
        str(study),
        "--format",
        fmt,
        "-o",
        str(job),
        "--",
        "python",
        "t.py",
    )
    assert done.status == 0, done.err
    import yaml

    rendered = yaml.safe_load(job.read_text())  # JSON is YAML too
    lr = rendered["studySpec"]["parameters"][0]
    assert lr["doubleValueSpec"] == {}  # proto3 leaves every zero out
    seen = tmp_path / "argv.json"
    script = f"import json, sys; json.dump(sys.argv[1:], open({str(seen)!r}, 'w'))"
    done = vtrain(
        "local",
        "run",
        "--job",
        str(job),
        "--output-dir",
        str(tmp_path / "out"),
        "--",
        sys.executable,
        "-c",
        script,
    )
    assert done.status == 0, done.err
    flags = [f for f in json.loads(seen.read_text()) if f.startswith("--")]
    values = dict(f[2:].split("=", 1) for f in flags)
    assert sorted(values) == ["flag", "layers", "lr", "shift", "width"]
    assert float(values["lr"]) == 0.0 and -1.0 <= float(values["shift"]) <= 0.0
    assert values["layers"] == "0" and values["width"] == "0" and values["flag"] == "0"

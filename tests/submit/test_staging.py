"""`--python-package DIR`: an sdist from the package's own build backend, uploaded to a real GCS
emulator, named in pythonPackageSpec, and installable the way Vertex's executor installs it."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Result, VertexServer

Run = Callable[..., Result]
EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/pytorch-xla.2-4.py310:latest"
PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "my-trainer"
version = "0.1.0"

[tool.hatch.build.targets.wheel]
packages = ["trainer"]
"""


def package(root: Path, pyproject: str = PYPROJECT) -> Path:
    """A trainer package: pyproject.toml, trainer/task.py, and junk the sdist must not carry."""
    (root / "trainer").mkdir(parents=True)
    (root / "pyproject.toml").write_text(pyproject)
    (root / "trainer" / "__init__.py").write_text("")
    (root / "trainer" / "task.py").write_text("import sys\nprint('task ran', sys.argv[1:])\n")
    (root / "trainer" / "__pycache__").mkdir()
    (root / "trainer" / "__pycache__" / "task.cpython-311.pyc").write_bytes(b"junk")
    return root


def flags(pkg: Path, staging: str) -> list[str]:
    return [
        "--name",
        "pkg",
        "--python-package",
        str(pkg),
        "--python-module",
        "trainer.task",
        "--executor-image",
        EXECUTOR,
        "--staging",
        staging,
    ]


def planned(vtrain: Run, pkg: Path, staging: str) -> str:
    import json

    done = vtrain(
        "render", "vertex", *flags(pkg, staging), "--format", "json", "--", "--epochs", "1"
    )
    assert done.status == 0, done.err
    spec = json.loads(done.out)["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]
    uris: list[str] = spec["packageUris"]
    assert len(uris) == 1
    return uris[0]


def test_the_sdist_is_staged_and_the_job_installs_what_was_uploaded(
    vtrain: Run,
    vertex_server: VertexServer,
    gcs_emulator: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_emulator.host)
    bucket = gcs_emulator.new_bucket()
    pkg = package(tmp_path / "src")
    staging = f"gs://{bucket}/staging"
    dry_run = planned(vtrain, pkg, staging)
    done = vtrain(
        "submit",
        "vertex",
        *flags(pkg, staging),
        "--project",
        "my-project",
        "--api-endpoint",
        vertex_server.address,
        "--",
        "--epochs",
        "1",
    )
    assert done.status == 0, done.err
    ((_, request),) = vertex_server.requests
    spec = request.custom_job.job_spec.worker_pool_specs[0].python_package_spec
    (uri,) = spec.package_uris
    assert uri == dry_run, "--dry-run showed the very URI that was uploaded"
    assert f"staged {pkg} as {uri}" in done.err
    assert uri.startswith(f"{staging}/") and uri.endswith("/my_trainer-0.1.0.tar.gz")
    assert (spec.python_module, spec.executor_image_uri) == ("trainer.task", EXECUTOR)
    # The object behind the URI is in the emulator, and it is a real sdist.
    blob_name = uri[len(f"gs://{bucket}/") :]
    data = gcs_emulator.client().bucket(bucket).blob(blob_name).download_as_bytes()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = set(tar.getnames())
        pkg_info = tar.extractfile("my_trainer-0.1.0/PKG-INFO")
        assert pkg_info is not None and b"Name: my-trainer" in pkg_info.read()
    assert {"my_trainer-0.1.0/pyproject.toml", "my_trainer-0.1.0/trainer/task.py"} <= names
    assert not any("__pycache__" in n for n in names)
    # What Vertex's executor does with it: pip install the URI's file, then python -m MODULE.
    sdist = tmp_path / "my_trainer-0.1.0.tar.gz"
    sdist.write_bytes(data)
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--target",
            str(target),
            str(sdist),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    ran = subprocess.run(
        [sys.executable, "-m", "trainer.task", "--epochs", "1"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(target)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.stdout.strip() == "task ran ['--epochs', '1']", ran.stderr


def test_an_edited_source_gets_a_new_uri_and_an_unchanged_one_the_same(
    vtrain: Run, tmp_path: Path
) -> None:
    pkg = package(tmp_path / "src")
    first = planned(vtrain, pkg, "gs://b/s")
    (pkg / "trainer" / "__pycache__" / "task.cpython-311.pyc").write_bytes(b"other junk")
    assert planned(vtrain, pkg, "gs://b/s") == first, "caches are not the source"
    (pkg / "trainer" / "task.py").write_text("print('changed')\n")
    assert planned(vtrain, pkg, "gs://b/s") != first


def test_a_backend_that_fails_is_one_line_naming_the_package(vtrain: Run, tmp_path: Path) -> None:
    pkg = package(tmp_path / "src", PYPROJECT.replace('version = "0.1.0"\n', ""))
    done = vtrain("render", "vertex", *flags(pkg, "gs://b/s"), "--", "--epochs", "1")
    assert done.status == 2, done.out + done.err
    assert len(done.err.strip().splitlines()) == 1 and "Traceback" not in done.err
    assert "--python-package: the package's build backend failed" in done.err
    assert "version" in done.err, "the backend's own reason is shown"


def test_a_bucket_that_does_not_exist_is_refused_before_sending(
    vtrain: Run,
    vertex_server: VertexServer,
    gcs_emulator: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_emulator.host)
    pkg = package(tmp_path / "src")
    staging = "gs://no-such-bucket-vtrain/s"
    done = vtrain(
        "submit",
        "vertex",
        *flags(pkg, staging),
        "--project",
        "my-project",
        "--api-endpoint",
        vertex_server.address,
        "--",
        "--epochs",
        "1",
    )
    assert done.status == 2, done.err
    assert "--staging: cannot stage the package" in done.err
    assert vertex_server.requests == []

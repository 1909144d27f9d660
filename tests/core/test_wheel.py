"""The built wheel is pure Python, and installed into a fresh venv really has the console script
and entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(out: Path, **env: str) -> tuple[Path, str]:
    """The wheel built from the source tree into `out`, and what the build said."""
    # --no-isolation: build with the hatchling already installed, no download at test time.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    (found,) = out.glob("vtrain-*.whl")
    return found, done.stdout + done.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("dist"))[0]


def test_the_wheel_is_pure_python(wheel: Path) -> None:
    # One wheel for every platform and Python 3: a package index takes it as it is.
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    with zipfile.ZipFile(wheel) as z:
        native = [n for n in z.namelist() if n.endswith((".so", ".pyd", ".dylib", ".c", ".pyi"))]
        tag = z.read("vtrain-0.1.0.dist-info/WHEEL").decode()
    assert native == []
    assert "Root-Is-Purelib: true" in tag and "Tag: py3-none-any" in tag


def test_no_c_source_is_left_in_the_tree() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.c", "*.h", "*.pyx"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    # Tracked or not (but not ignored: the virtual environments' own), and still there.
    assert [name for name in listed if (ROOT / name).exists()] == []


def test_wheel_installs_and_runs_vtrain_info(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # The core has no dependencies, so --no-deps installs all it needs, offline.
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
        check=True,
        timeout=300,
    )
    done = subprocess.run(
        [str(env_dir / "bin" / "vtrain"), "info", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,  # not the source tree: the installed copy must be the one that runs
        env={
            "PATH": str(env_dir / "bin"),
            "TF_CONFIG": '{"cluster": {"chief": ["c:1"], '
            '"worker": ["w:1"]}, "task": {"type": "worker", "index": 0}}',
        },
        check=True,
    )
    shown = json.loads(done.stdout)
    assert (shown["role"], shown["rank"], shown["num_trainers"]) == ("worker", 1, 2)

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = subprocess.run(
        [
            str(python),
            "-c",
            "import json\nfrom importlib.metadata import entry_points as e\n"
            "print(json.dumps({p.name: p.value for p in e(group='vtrain.plugins')}))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert json.loads(listed.stdout) == declared.get("entry-points", {}).get("vtrain.plugins", {})
    assert set(shown["plugins"]) == set(json.loads(listed.stdout))
    where = subprocess.run(
        [str(python), "-c", "import vtrain; print(vtrain.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert str(env_dir) in where.stdout

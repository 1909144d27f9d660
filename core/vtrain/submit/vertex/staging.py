"""A Python package for Vertex's pre-built containers: built as an sdist and staged to gs://.

The sdist comes from the package's own build backend through `build`, the
PyPA front end (what `python -m build --sdist` runs), so it is the archive
pip installs: PKG-INFO, the backend's file selection, its own top folder.
It is staged under a folder named for a hash of the source tree, so a
changed source gets a new URI while `--dry-run` already shows the one a real
submit uploads; the build runs once per command and both use it.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
from functools import cache
from typing import Any

from vtrain.errors import ConfigError, StorageError, UsageError
from vtrain.submit import sdk

_SKIP = {"__pycache__", ".git", ".venv", ".nox", ".mypy_cache", ".pytest_cache", "dist", "build"}
_DIGEST_CHARS = 12
# pip's last words when a requirement cannot be had: the requirement is what the user fixes.
_PIP_MISSING = re.compile(
    r"(?:No matching distribution found for|satisfies the requirement) (?P<requirement>\S+)"
)


def tree_digest(root: str) -> str:
    """A hash of every file's path and bytes under `root`, build outputs and caches left out."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.endswith(".egg-info"))
        for name in sorted(files):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()[:_DIGEST_CHARS]


def _source(package_dir: str) -> str:
    root = os.path.abspath(package_dir)
    if not os.path.isdir(root):
        raise UsageError(
            "not a folder",
            source="--python-package",
            value=package_dir,
            expected="the package's source folder, or a gs:// URI",
        )
    if not any(os.path.exists(os.path.join(root, f)) for f in ("pyproject.toml", "setup.py")):
        raise ConfigError(
            "no pyproject.toml or setup.py",
            source="--python-package",
            value=package_dir,
            expected="a folder pip can install",
        )
    return root


def build_sdist(package_dir: str) -> tuple[str, bytes]:
    """(file name, bytes) of the package's sdist, as its build backend makes it."""
    root = _source(package_dir)
    return _build(root, tree_digest(root))


@cache
def _build(root: str, digest: str) -> tuple[str, bytes]:
    # `digest` is part of the key: an edited source between two calls is built again.
    build, hooks = sdk.build_frontend()
    with tempfile.TemporaryDirectory(prefix="vtrain-sdist-") as out:
        try:
            # Quiet: a backend's progress lines would mix into the rendered job on stdout.
            # Inside the try: a pyproject.toml that does not parse is refused here.
            builder = build.ProjectBuilder(root, sys.executable, hooks.quiet_subprocess_runner)
            if _installed(build, builder):
                path = builder.build("sdist", out)
            else:
                path = _build_isolated(build, hooks, root, out)
        except (build.BuildException, build.BuildBackendException, build.FailedProcessError) as e:
            raise ConfigError(
                f"the package's build backend failed: {_last_line(e)}",
                source="--python-package",
                value=root,
                hint="`python -m build --sdist` in that folder shows the whole error",
            ) from None
        with open(path, "rb") as f:
            return os.path.basename(path), f.read()


def _installed(build: Any, builder: Any) -> bool:
    """True when the backend and what it asks for are all installed here: no isolation needed."""
    # As `python -m build --no-isolation` would: no download, the backend this Python has.
    # The backend's own requirements are asked of the backend, so it must import first.
    if any(next(iter(build.check_dependency(r)), None) for r in builder.build_system_requires):
        return False
    return not builder.check_dependencies("sdist")


def _build_isolated(build: Any, hooks: Any, root: str, out: str) -> str:
    """`python -m build --sdist`'s default: a fresh environment with the backend's requirements."""
    with sdk.build_env().DefaultIsolatedEnv() as env:
        builder = build.ProjectBuilder.from_isolated_env(
            env, root, runner=hooks.quiet_subprocess_runner
        )
        _install(env, builder.build_system_requires, "[build-system] requires", root)
        _install(env, builder.get_requires_for_build("sdist"), "build backend's requirements", root)
        path: str = builder.build("sdist", out)
        return path


def _install(env: Any, requirements: Any, what: str, root: str) -> None:
    """Install `requirements` into the isolated environment, or say which one could not be."""
    try:
        env.install(requirements)
    except subprocess.CalledProcessError as e:
        said = e.stderr or e.output or b""
        text = said.decode(errors="replace") if isinstance(said, bytes) else str(said)
        errors = [
            line[len("ERROR:") :].strip() for line in text.splitlines() if line.startswith("ERROR:")
        ]
        found = next((m for line in errors if (m := _PIP_MISSING.search(line))), None)
        failed = found["requirement"] if found else ", ".join(sorted(requirements))
        raise ConfigError(
            f"cannot install the package's build requirement {failed} ({what}): "
            f"{errors[-1] if errors else f'pip exited with {e.returncode}'}",
            source="--python-package",
            value=root,
            expected="requirements pip can install from this machine's package index",
            hint="install the backend and its requirements here (the build then needs no "
            "isolated environment), or fix the requirement in pyproject.toml",
        ) from None


def _last_line(error: Exception) -> str:
    cause = getattr(error, "exception", None)
    output = getattr(cause, "output", None) or b""
    if isinstance(output, bytes):
        output = output.decode(errors="replace")
    lines = [line for line in str(output).splitlines() if line.strip()]
    return lines[-1].strip() if lines else str(error).splitlines()[0]


def planned_uri(package_dir: str, staging: str) -> str:
    """Where `stage` puts the package: ``<staging>/<tree hash>/<name>-<version>.tar.gz``."""
    root = _source(package_dir)
    digest = tree_digest(root)
    name, _ = _build(root, digest)
    return f"{staging.rstrip('/')}/{digest}/{name}"


def stage(package_dir: str, staging: str) -> str:
    """Upload the package's sdist under `staging`; its gs:// URI."""
    from vtrain.storage import storage_client

    uri = planned_uri(package_dir, staging)
    _, data = build_sdist(package_dir)
    bucket, _, blob_name = uri[len("gs://") :].partition("/")
    try:
        storage_client(where=uri).bucket(bucket).blob(blob_name).upload_from_string(
            data, content_type="application/gzip"
        )
    except StorageError:
        raise  # no credentials: its own line says how to get some
    except Exception as e:  # the client raises many kinds; each one means "not staged"
        raise StorageError(
            f"cannot stage the package: {type(e).__name__}",
            source="--staging",
            value=staging,
            expected="a bucket you can write to",
        ) from None
    return uri

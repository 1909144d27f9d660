"""A Python package for Vertex's pre-built containers: archived as an sdist and staged to gs://.

The archive is a source distribution pip installs (the package folder, with
its pyproject.toml or setup.py, under one top folder). It is built the same
way every time (sorted entries, no timestamps or owners), so its name carries
its content hash: `--dry-run` shows the URI that a real submit uploads.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile

from vtrain.errors import ConfigError, StorageError, UsageError

_SKIP = {"__pycache__", ".git", ".venv", ".nox", ".mypy_cache", ".pytest_cache", "dist", "build"}


def build_sdist(package_dir: str) -> tuple[str, bytes]:
    """(file name, bytes) of the package's source archive."""
    root = os.path.abspath(package_dir)
    if not os.path.isdir(root):
        raise UsageError("not a folder", source="--python-package", value=package_dir,
                         expected="the package's source folder, or a gs:// URI")  # fmt: skip
    if not any(os.path.exists(os.path.join(root, f)) for f in ("pyproject.toml", "setup.py")):
        raise ConfigError(
            "no pyproject.toml or setup.py", source="--python-package", value=package_dir,
            expected="a folder pip can install",
        )  # fmt: skip
    top = os.path.basename(root).replace("_", "-") or "package"
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.endswith(".egg-info"))
            for name in sorted(files):
                path = os.path.join(folder, name)
                info = tar.gettarinfo(path, arcname=os.path.join(top, os.path.relpath(path, root)))
                # Same content, same bytes: owners and times would change the hash.
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mtime = 0
                with open(path, "rb") as f:
                    tar.addfile(info, f)
    data = gzip.compress(raw.getvalue(), mtime=0)
    digest = hashlib.sha256(data).hexdigest()[:12]
    return f"{top}-{digest}.tar.gz", data


def planned_uri(package_dir: str, staging: str) -> str:
    """Where `stage` puts the package: ``<staging>/<name>-<hash>.tar.gz``."""
    name, _ = build_sdist(package_dir)
    return f"{staging.rstrip('/')}/{name}"


def stage(package_dir: str, staging: str) -> str:
    """Upload the package's archive under `staging`; its gs:// URI."""
    from vtrain.storage import storage_client

    name, data = build_sdist(package_dir)
    bucket, _, prefix = staging[len("gs://") :].partition("/")
    blob_name = f"{prefix.strip('/')}/{name}".lstrip("/")
    try:
        storage_client().bucket(bucket).blob(blob_name).upload_from_string(
            data, content_type="application/gzip"
        )
    except Exception as e:  # the client raises many kinds; each one means "not staged"
        raise StorageError(
            f"cannot stage the package: {type(e).__name__}", source="--staging", value=staging,
            expected="a bucket you can write to",
        ) from None  # fmt: skip
    return f"gs://{bucket}/{blob_name}"

"""gs:// without credentials: every way in ends in one line that names the location and the fix.

Each entry point runs in its own interpreter with no credentials anywhere google.auth
looks: no GOOGLE_APPLICATION_CREDENTIALS, no emulator, a HOME and a gcloud config
folder that are empty, and a metadata server on a loopback port that refuses every
connection. google.auth reads its metadata address when it is imported, so only a
fresh interpreter sees it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("google.cloud.storage")

FIX = "gcloud auth application-default login"
PROBLEM = "no Google credentials to reach Cloud Storage"


@pytest.fixture(scope="module")
def refused_port() -> Iterator[int]:
    """A loopback port bound and never listened on: every connection to it is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.fixture
def no_credentials(tmp_path: Path, refused_port: int) -> dict[str, str]:
    """An environment in which google.auth finds no credentials, and gives up at once."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "CLOUDSDK_", "GCE_", "AIP_", "VTRAIN_"))
        and k != "STORAGE_EMULATOR_HOST"
    }
    home = tmp_path / "home"
    home.mkdir()
    env.update(
        HOME=str(home),
        CLOUDSDK_CONFIG=str(home / "gcloud"),
        GCE_METADATA_HOST=f"127.0.0.1:{refused_port}",
        GCE_METADATA_IP=f"127.0.0.1:{refused_port}",
        # No bucket is mounted: gs:// goes through the client.
        VTRAIN_GCS_MOUNT=str(tmp_path / "no-mount"),
        AIP_TRAINING_DATA_URI="gs://bucket/data-*.jsonl",
    )
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def _script(body: str) -> list[str]:
    head = "import vtrain\nvtrain.one_line_errors()\n"
    return [sys.executable, "-c", head + textwrap.dedent(body)]


# The three: each under one_line_errors(), each ending the script in one line.
SCRIPTS = {
    "data.files": ("vtrain.data.files()", "gs://bucket"),
    "checkpoint save": (
        "from vtrain.checkpoints import CheckpointManager\n"
        "CheckpointManager('gs://bucket/ck').save(1, b'x')",
        "gs://bucket/ck",
    ),
    "open_location read": (
        "from vtrain.storage import open_location\nopen_location('gs://bucket/x').read_bytes('y')",
        "gs://bucket/x",
    ),
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_ends_in_one_line_naming_the_location_and_the_fix(
    name: str, no_credentials: dict[str, str], tmp_path: Path
) -> None:
    body, where = SCRIPTS[name]
    done = _run(_script(body), no_credentials, tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1, done.stderr
    assert PROBLEM in lines[0] and FIX in lines[0] and "/gcs/" in lines[0], lines[0]
    assert where in lines[0]


def test_vtrain_info_data_says_it_in_one_line(
    no_credentials: dict[str, str], tmp_path: Path
) -> None:
    done = _run([sys.executable, "-m", "vtrain", "info", "--data"], no_credentials, tmp_path)
    assert "Traceback" not in done.stdout + done.stderr
    found = [line for line in done.stdout.splitlines() if PROBLEM in line]
    assert len(found) == 1, done.stdout + done.stderr
    assert FIX in found[0] and "gs://bucket" in found[0]


# Every Location operation that reaches Cloud Storage, and its compare-and-set; one
# interpreter runs them all and prints what each raised. At once, in threads: google.auth
# waits about 3 s for the metadata server each time it looks for credentials.
OPERATIONS = """
import io, os, tempfile
from concurrent.futures import ThreadPoolExecutor
from vtrain.errors import StorageError
from vtrain.storage import open_location

here = tempfile.mkdtemp()
with open(os.path.join(here, "f"), "wb") as f:
    f.write(b"x")
calls = {
    "join": lambda loc: loc.join("a").exists(),
    "open_read": lambda loc: loc.open_read("a"),
    "open_write": lambda loc: loc.open_write("a"),
    "read_bytes": lambda loc: loc.read_bytes("a"),
    "write_bytes": lambda loc: loc.write_bytes("a", b"x"),
    "write_checked": lambda loc: loc.write_checked("a", b"x", 0),
    "read_range": lambda loc: loc.read_range("a", 0, 1),
    "download_fileobj": lambda loc: loc.download_fileobj("a", io.BytesIO()),
    "stored_checksums": lambda loc: loc.stored_checksums(),
    "list_objects": lambda loc: loc.list_objects("d"),
    "exists": lambda loc: loc.exists("a"),
    "list": lambda loc: loc.list(),
    "remove": lambda loc: loc.remove("a"),
    "upload": lambda loc: loc.upload(here, "a"),
    "download": lambda loc: loc.download("a", here + "/out"),
    "cas get": lambda loc: loc.cas("lease.json").get(),
    "cas put": lambda loc: loc.cas("lease.json").put(b"{}", 0),
}
def outcome(name):
    try:
        calls[name](open_location("gs://bucket/prefix"))
    except StorageError as e:
        return f"{name}\\t{e}"
    return f"{name}\\tno error"

with ThreadPoolExecutor(len(calls)) as pool:
    for line in pool.map(outcome, calls):
        print(line)
"""


def test_every_operation_and_the_compare_and_set_say_it_in_one_line(
    no_credentials: dict[str, str], tmp_path: Path
) -> None:
    done = _run([sys.executable, "-c", OPERATIONS], no_credentials, tmp_path)
    assert done.returncode == 0, done.stderr
    results = dict(line.split("\t", 1) for line in done.stdout.splitlines())
    assert len(results) == 17, done.stdout
    for name, message in results.items():
        assert PROBLEM in message and FIX in message, (name, message)
        assert message.startswith("gs://bucket/prefix"), (name, message)

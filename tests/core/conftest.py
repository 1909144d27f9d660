"""Fixtures shared by the core tests: a real GCS emulator, and the three storage media."""

from __future__ import annotations

import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from watchdogs import _stop_the_watchdog_a_test_started  # noqa: F401  (autouse)

EMULATOR_START_TIMEOUT = 60.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class GcsEmulator:
    """A running `gcp-storage-emulator` on loopback."""

    host: str
    """Its base URL, as STORAGE_EMULATOR_HOST wants it."""

    @property
    def environ(self) -> dict[str, str]:
        """The environment that points vtrain (and the client) at this emulator."""
        return {"STORAGE_EMULATOR_HOST": self.host}

    def client(self) -> Any:
        """A storage client talking to this emulator."""
        from vtrain.storage import storage_client

        return storage_client(self.environ)

    def new_bucket(self) -> str:
        """Create an empty bucket with a fresh name and return the name."""
        name = f"vtrain-test-{secrets.token_hex(6)}"
        self.client().create_bucket(name)
        return name


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status < 500)
    except urllib.error.HTTPError as e:
        return e.code < 500
    except OSError:
        return False


def _start_emulator(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    host = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "gcp_storage_emulator",
        "start",
        "--host=127.0.0.1",
        f"--port={port}",
        "--in-memory",
    ]
    with open(log, "ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + EMULATOR_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if _answers(f"{host}/storage/v1/b?project=vtrain"):
            return process, host
        time.sleep(0.1)
    process.kill()
    process.wait()
    raise RuntimeError(f"the GCS emulator did not start on {host}; log:\n{log.read_text()}")


@pytest.fixture(scope="session")
def gcs_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GcsEmulator]:
    """A real GCS JSON-API server on a free loopback port, for the whole session."""
    log = tmp_path_factory.mktemp("gcs-emulator") / "emulator.log"
    for attempt in range(3):
        try:
            process, host = _start_emulator(log)
            break
        except RuntimeError:
            if attempt == 2:  # the port was taken between probing and binding, three times
                raise
    try:
        yield GcsEmulator(host)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass(frozen=True)
class Medium:
    """A place to put a location under test, with the options that reach it."""

    name: str
    uri: str
    options: dict[str, Any] = field(default_factory=dict)
    mount: Path | None = None
    """For "fuse": the folder standing in for /gcs/BUCKET."""

    def sub(self, name: str) -> str:
        """The URI of a subfolder."""
        return f"{self.uri.rstrip('/')}/{name}"


MEDIA = ("local", "fuse", "gcs")


@pytest.fixture(params=MEDIA)
def medium(request: pytest.FixtureRequest, tmp_path: Path) -> Medium:
    """Each storage medium in turn: a local disk, a gs:// URI mapped to a FUSE mount
    (a local folder standing in for /gcs/), and gs:// on the emulator."""
    if request.param == "local":
        return Medium("local", str(tmp_path / "root"), {"environ": {}})
    if request.param == "fuse":
        mount = tmp_path / "gcs"
        (mount / "bucket").mkdir(parents=True)
        options = {"gcs_mount": str(mount), "environ": {}}
        return Medium("fuse", "gs://bucket/root", options, mount / "bucket")
    emulator: GcsEmulator = request.getfixturevalue("gcs_emulator")
    bucket = emulator.new_bucket()
    options = {"environ": emulator.environ, "gcs_mount": str(tmp_path / "none")}
    return Medium("gcs", f"gs://{bucket}/root", options)

"""`--track mlflow`: a real MLflow tracking server for a local job or study, on loopback.

`TrackingServer.start` runs `mlflow server` (the `local-mlflow` extra) as a
process of its own session, with its SQLite store and its artifacts in the job's
folder (`<output>/mlflow/`), on a free 127.0.0.1 port, and waits for its
`/health` to answer. The replicas get MLFLOW_TRACKING_URI and VTRAIN_TRACK=mlflow;
the server is stopped with the job, and the store stays: `browse` is the command
that serves it again. Where MLFLOW_TRACKING_URI already names a server, that one
is used and none is started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping

from vtrain.errors import LaunchError, MissingExtraError
from vtrain.local.answers import wait_for_answer
from vtrain.local.ports import reserve_ports
from vtrain.log import logger
from vtrain.track.backends import MLFLOW, VARIABLE, backends
from vtrain.track.mlflow_runs import URI_VARIABLE

EXTRA = "local-mlflow"
FOLDER = "mlflow"
START_TIMEOUT = 60.0
"""Seconds the server has to answer /health (about 6 s on a 2-core machine)."""
STOP_GRACE = 5.0

_log = logger(__name__)


class TrackingServer:
    """A running `mlflow server`, and the store it keeps in a job's folder."""

    def __init__(self, folder: str, port: int, process: subprocess.Popen[bytes]) -> None:
        self.folder = folder
        self.port = port
        self._process = process

    @property
    def uri(self) -> str:
        """The server's address: MLFLOW_TRACKING_URI, and its web UI."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def store(self) -> str:
        """The SQLite store's URI."""
        return f"sqlite:///{os.path.join(self.folder, 'mlflow.db')}"

    @property
    def browse(self) -> str:
        """The command that serves the kept store again, once the job is over."""
        artifacts = os.path.join(self.folder, "artifacts")
        return (
            f"mlflow server --host 127.0.0.1 --backend-store-uri {self.store} "
            f"--artifacts-destination {artifacts}"
        )

    @classmethod
    def start(cls, job_folder: str) -> TrackingServer:
        """Serve a store in `job_folder`/mlflow until `stop`."""
        try:
            import mlflow.server  # noqa: F401 - only to know it is there: it runs in its own process
        except ImportError:
            raise MissingExtraError("--track mlflow", EXTRA, module="mlflow") from None
        folder = os.path.join(job_folder, FOLDER)
        os.makedirs(folder, exist_ok=True)
        log = open(os.path.join(folder, "server.log"), "ab")  # noqa: SIM115 - the server's
        with log, reserve_ports(1) as (port,):
            process = subprocess.Popen(
                [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1"]
                + ["--port", str(port), "--workers", "1"]
                + ["--backend-store-uri", f"sqlite:///{os.path.join(folder, 'mlflow.db')}"]
                + ["--artifacts-destination", os.path.join(folder, "artifacts")],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its workers go with it, and no Ctrl-C reaches it
            )
            server = cls(folder, port, process)
            try:
                server._wait(START_TIMEOUT)
            except BaseException:
                server.stop()
                raise
        _log.debug("MLflow tracking server on %s, its store in %s", server.uri, folder)
        return server

    def variables(self) -> dict[str, str]:
        """What every replica gets: the server, and the backend on."""
        return {URI_VARIABLE: self.uri, VARIABLE: MLFLOW}

    def _wait(self, timeout: float) -> None:
        def gone() -> LaunchError | None:
            if self._process.poll() is None:
                return None
            return LaunchError(
                f"the MLflow tracking server exited with status {self._process.returncode}",
                value=os.path.join(self.folder, "server.log"),
                expected="a server that stays up (its log says why)",
            )

        wait_for_answer(f"{self.uri}/health", timeout, "the MLflow tracking server", gone=gone)

    def stop(self) -> None:
        """End the server and its workers; the store stays in the job's folder."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGTERM)
        try:
            self._process.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()


def tracking(
    track: str, job_folder: str, environ: Mapping[str, str]
) -> tuple[Mapping[str, str], TrackingServer | None]:
    """The replicas' parent environment for `--track TRACK`, from `environ`, and the server
    started for it, if any: the caller stops it."""
    parent = {**environ, VARIABLE: track}
    if MLFLOW not in backends(parent) or parent.get(URI_VARIABLE):
        return parent, None
    server = TrackingServer.start(job_folder)
    return {**parent, **server.variables(), VARIABLE: track}, server

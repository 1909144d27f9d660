"""Read a job's MLflow runs back through the REST API of a real tracking server.

`served(folder)` serves the store a `--track mlflow` job kept in `<job>/mlflow/`
with the very command its summary printed; `Runs` asks that server over HTTP, as
any MLflow client would, for the runs, their metric histories and their artifacts.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@contextlib.contextmanager
def served(browse: str, folder: Path) -> Iterator[Runs]:
    """Run `browse` (the summary's `mlflow server ...` command) on a free port until the block
    exits; the server's `Runs`."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [sys.executable, "-m", *shlex.split(browse), "--port", str(port), "--workers", "1"]
    with open(folder / "reading-server.log", "wb") as log:
        process = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        runs = Runs(f"http://127.0.0.1:{port}")
        runs.wait(60, process)
        yield runs
    finally:
        import os
        import signal

        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:  # a busy machine: its workers take their time
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass
class Runs:
    """A tracking server's REST API (MLflow's 2.0 API)."""

    uri: str

    def wait(self, seconds: float, process: subprocess.Popen[bytes]) -> None:
        import time

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert process.poll() is None, "the MLflow server exited"
            with contextlib.suppress(OSError), _OPENER.open(f"{self.uri}/health", timeout=2):
                return
            time.sleep(0.2)
        raise AssertionError(f"the MLflow server on {self.uri} never answered /health")

    def _get(self, endpoint: str, **query: Any) -> Any:
        url = f"{self.uri}/api/2.0/mlflow/{endpoint}?{urllib.parse.urlencode(query)}"
        with _OPENER.open(url, timeout=30) as answer:
            return json.load(answer)

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            f"{self.uri}/api/2.0/mlflow/{path}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with _OPENER.open(request, timeout=30) as answer:
            return json.load(answer)

    def search(self, experiment: str = "0", filter: str = "") -> list[dict[str, Any]]:
        """Every run of `experiment` that `filter` takes."""
        body = {"experiment_ids": [experiment], "filter": filter, "max_results": 1000}
        return list(self._post("runs/search", body).get("runs", []))

    def history(self, run_id: str, key: str) -> list[tuple[int, float]]:
        """Every (step, value) metric `key` was given, in the order the server keeps them."""
        found = self._get("metrics/get-history", run_id=run_id, metric_key=key, max_results=25000)
        return [(int(m.get("step", 0)), float(m["value"])) for m in found.get("metrics", [])]

    def artifacts(self, run_id: str, path: str = "") -> list[str]:
        """The paths of the run's artifacts at `path`."""
        found = self._get("artifacts/list", run_id=run_id, path=path)
        return [f["path"] for f in found.get("files", [])]


def params(run: dict[str, Any]) -> dict[str, str]:
    """A searched run's params."""
    return {p["key"]: p["value"] for p in run["data"].get("params", [])}


def tags(run: dict[str, Any]) -> dict[str, str]:
    """A searched run's tags."""
    return {t["key"]: t["value"] for t in run["data"].get("tags", [])}


def metric_keys(run: dict[str, Any]) -> set[str]:
    """The names of a searched run's metrics."""
    return {m["key"] for m in run["data"].get("metrics", [])}


def one_resumed_run(runs: Runs, metric: str, steps: list[int]) -> dict[str, Any]:
    """Check that the server holds exactly one finished run of a job that was killed and
    resumed: `metric` at each of `steps` once, each later attempt's start marked at the
    step it resumed from, what it redid under its own name, no param changed; the run."""
    found = runs.search()
    assert len(found) == 1, [r["info"]["run_name"] for r in found]
    run = found[0]
    run_id, marked = run["info"]["run_id"], tags(run)
    assert run["info"]["status"] == "FINISHED", run["info"]
    attempts = int(marked["vtrain.attempt"])
    assert attempts >= 2, marked
    resumed = {
        int(k.split("-")[1].split(".")[0]): int(v)
        for k, v in marked.items()
        if k.startswith("vtrain.attempt-") and k.endswith(".resumed_step")
    }
    assert resumed and all(step > 0 for step in resumed.values()), marked
    shown = [s for s, _ in runs.history(run_id, metric)]
    assert sorted(shown) == steps, shown
    starts = {(int(v), s) for s, v in runs.history(run_id, "vtrain.attempt")}
    assert {(k, step) for k, step in resumed.items()} <= starts, (resumed, starts)
    for key in metric_keys(run):
        if key.startswith(f"{metric}/attempt-"):
            attempt = int(key.rpartition("-")[2])
            redone = [s for s, _ in runs.history(run_id, key)]
            assert redone and all(s > resumed.get(attempt, 0) for s in redone), (key, redone)
    assert not [k for k in params(run) if "/attempt-" in k], params(run)
    return run

"""The MLflow backend: one attempt's records, written to the run's MLflow run by its client.

The sender's thread hands it batches of records (`vtrain.track.sender`): it opens
the run on the first (found by its tag, else made), then logs each batch with as
few requests as MLflow's limits allow. An attempt after the first marks where it
began (`vtrain.attempt` at that step, `vtrain.attempt-<k>.resumed_step`), and
writes what it redoes under names of its own (`vtrain.track.mlflow_rules`). A
request the server refuses (HTTP 4xx: a name MLflow does not take) is said once and
dropped, entity by entity, so one bad name cannot hold back the rest; any other
failure is the sender's to retry.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from vtrain.log import logger
from vtrain.track.mlflow_rules import ATTEMPT_TAG, metric_name, param_updates
from vtrain.track.mlflow_runs import address, client, experiment_id, open_run
from vtrain.track.records import ARTIFACT, END, METRIC, PARAMS, RESUME, START, TAGS, parse

log = logger(__name__)

# Within MLflow's limits on one log_batch request (mlflow.utils.validation): 800 metrics,
# 100 params and 100 tags are 1,000 entities at most.
_MOST_METRICS, _MOST = 800, 100


class MlflowSink:
    """Writes attempt `attempt` of vtrain's run `run` to MLflow."""

    def __init__(self, run: str, attempt: int, environ: Mapping[str, str]) -> None:
        self._run = run
        self._attempt = attempt
        self._environ = dict(environ)
        self._mlflow: Any = None
        self._run_id: str | None = None
        self._params: dict[str, str] = {}
        self._earlier: dict[str, int | None] = {}
        self._refused = False

    @property
    def run_id(self) -> str | None:
        """The MLflow run's id, once it is open."""
        return self._run_id

    def __call__(self, lines: list[bytes]) -> None:
        if self._run_id is None:
            self._open()
        from mlflow.entities import Metric, Param, RunTag

        metrics: list[Any] = []
        params: dict[str, str] = {}
        tags: dict[str, str] = {}
        files: list[tuple[str, str]] = []
        status = None
        for record in parse(lines):
            kind, ms = record["kind"], int(record.get("t", 0) * 1000)
            if kind == METRIC:
                step, name = record["step"], record["name"]
                shown = metric_name(name, step, self._attempt, self._earlier_step(name))
                metrics.append(Metric(shown, float(record["value"]), ms, step))
            elif kind == PARAMS:
                params.update(param_updates(self._params, record["values"], self._attempt))
            elif kind == TAGS:
                tags.update(record["values"])
            elif kind == START:
                tags[ATTEMPT_TAG] = str(self._attempt)
            elif kind == RESUME:
                tags[f"vtrain.attempt-{self._attempt}.resumed_step"] = str(record["step"])
                metrics.append(Metric(ATTEMPT_TAG, float(self._attempt), ms, record["step"]))
            elif kind == ARTIFACT and record.get("local"):
                files.append((record["local"], record["name"]))
            elif kind == END:
                status = "FINISHED" if record.get("ok", True) else "FAILED"
        for chunk in _chunks(metrics, [Param(k, v) for k, v in params.items()], tags, RunTag):
            self._log(*chunk)
        self._params.update(params)
        for local, name in files:
            self._artifact(local, name)
        if status is not None:
            self._mlflow.set_terminated(self._run_id, status)

    def _open(self) -> None:
        mlflow = self._mlflow or client(self._environ)
        self._mlflow = mlflow
        experiment = experiment_id(mlflow, self._environ)
        found = open_run(mlflow, experiment, self._run)
        if found.info.status != "RUNNING":  # a later attempt of a run an earlier one ended
            mlflow.update_run(found.info.run_id, status="RUNNING")
        self._params = dict(found.data.params)
        self._run_id = found.info.run_id
        log.info(f"vtrain: MLflow run {self._run}: {address(mlflow, experiment, self._run_id)}")

    def _earlier_step(self, name: str) -> int | None:
        """The highest step earlier attempts logged `name` at (asked once per attempt)."""
        if self._attempt == 1:
            return None
        if name not in self._earlier:
            history = self._mlflow.get_metric_history(self._run_id, name)
            self._earlier[name] = max((m.step for m in history), default=None)
        return self._earlier[name]

    def _log(self, metrics: list[Any], params: list[Any], tags: list[Any]) -> None:
        from mlflow.exceptions import MlflowException

        try:
            self._mlflow.log_batch(self._run_id, metrics, params, tags)
        except MlflowException as e:
            if not _refused(e):
                raise
            singles = [([m], [], []) for m in metrics] + [([], [p], []) for p in params]
            for one in singles + [([], [], [t]) for t in tags]:  # which one: the rest still goes
                try:
                    self._mlflow.log_batch(self._run_id, *one)
                except MlflowException as again:
                    if not _refused(again):
                        raise
                    self._say_refused(again)

    def _artifact(self, local: str, name: str) -> None:
        if not os.path.exists(local):
            return
        if os.path.isdir(local):
            self._mlflow.log_artifacts(self._run_id, local, name)
            return
        if os.path.basename(local) == name:
            self._mlflow.log_artifact(self._run_id, local)
            return
        with tempfile.TemporaryDirectory(prefix="vtrain-artifact-") as scratch:
            named = os.path.join(scratch, name)
            os.link(local, named) if _same_disk(local, scratch) else _copy(local, named)
            self._mlflow.log_artifact(self._run_id, named)

    def _say_refused(self, e: Exception) -> None:
        if not self._refused:
            from vtrain.redact import redact_text

            log.warning(f"vtrain: MLflow run {self._run}: refused, dropped: {redact_text(str(e))}")
        self._refused = True


def _refused(e: Exception) -> bool:
    """True for a request MLflow refused for what it held (HTTP 4xx): sending it again fails."""
    code = getattr(e, "get_http_status_code", lambda: 500)()
    return 400 <= int(code) < 500


def _chunks(
    metrics: Sequence[Any], params: Sequence[Any], tags: Mapping[str, str], tag: Any
) -> Iterator[tuple[list[Any], list[Any], list[Any]]]:
    """log_batch's arguments within MLflow's limits per request (1,000 entities, 100 params,
    100 tags)."""
    tagged = [tag(k, v) for k, v in tags.items()]
    while metrics or params or tagged:
        yield list(metrics[:_MOST_METRICS]), list(params[:_MOST]), tagged[:_MOST]
        metrics, params, tagged = metrics[_MOST_METRICS:], params[_MOST:], tagged[_MOST:]


def _same_disk(a: str, b: str) -> bool:
    return os.stat(a).st_dev == os.stat(b).st_dev


def _copy(source: str, target: str) -> None:
    import shutil

    shutil.copyfile(source, target)

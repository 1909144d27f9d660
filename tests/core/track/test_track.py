"""`handle.track` on every storage medium: one run across restarts, the leader alone, marks of
each resume, and a backend that fails never fails the training loop."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest

from vtrain.cluster import ClusterInfo
from vtrain.plugins.handle import Handle, Resumed
from vtrain.storage import Location, open_location
from vtrain.track import merged, read_run
from vtrain.track.records import ARTIFACT, PARAMS, RESUME, START
from vtrain.track.sender import Sender
from vtrain.track.session import Track

CHIEF = {"CLUSTER_SPEC": '{"cluster": {"workerpool0": ["a:1"], "workerpool1": ["b:1"]}, '
         '"task": {"type": "workerpool0", "index": 0}}'}  # fmt: skip


def handle(base: str, leader: bool = True, **extra: str) -> Handle:
    env = {**CHIEF, "AIP_MODEL_DIR": f"{base}/model/", "CLOUD_ML_JOB_ID": "job-7", **extra}
    return Handle(ClusterInfo.from_env(env), is_leader=leader, environ=env)


def attempt(base: str, resumed_at: int | None, steps: range) -> None:
    """One start of the leader: resume (or not), params, a metric a step, the end."""
    h = handle(base)
    if resumed_at is not None:
        h.track.resumed(resumed_at, f"{base}/checkpoints/step-{resumed_at}")
    h.track.params({"lr": 0.1, "batch": 32})
    for step in steps:
        h.track.metrics({"loss": 1.0 / step}, step=step)
    h.close()


def test_one_run_across_restarts_each_attempt_and_resume_marked(tmp_path: Path) -> None:
    base = str(tmp_path / "out")
    attempt(base, None, range(1, 36))
    attempt(base, 30, range(31, 61))  # killed at 35, resumed from the commit of 30
    records = read_run(f"{base}/tracking/job-7")
    starts = [r for r in records if r["kind"] == START]
    assert [(s["run"], s["attempt"]) for s in starts] == [("job-7", 1), ("job-7", 2)]
    [resume] = [r for r in records if r["kind"] == RESUME]
    assert (resume["attempt"], resume["step"]) == (2, 30)
    assert [s for s, _ in merged(records)["loss"]] == list(range(1, 61))
    params = [r for r in records if r["kind"] == PARAMS]
    assert {p["attempt"] for p in params} == {1, 2} and params[0]["values"] == {
        "lr": "0.1",
        "batch": "32",
    }


def test_on_every_medium(medium: Any, tmp_path: Path) -> None:
    """A local disk, a /gcs/ mount, and gs:// on a real emulator (objects written whole)."""

    def folder() -> Location:
        return open_location(medium.sub("tracking"), **medium.options)

    for number in (1, 2):
        track = Track(leader=True, run="job", folder=folder)
        track.metrics({"acc": 0.5 * number}, step=number)
        model = tmp_path / f"model-{number}.txt"
        model.write_text("weights")
        uri = track.artifact(model)
        assert uri is not None and uri.endswith(f"artifacts/model-{number}.txt")
        track.close()
    records = read_run(folder())
    assert merged(records) == {"acc": [(1, 0.5), (2, 1.0)]}
    assert [r["name"] for r in records if r["kind"] == ARTIFACT] == ["model-1.txt", "model-2.txt"]
    assert folder().join("artifacts").read_bytes("model-2.txt") == b"weights"


def test_other_replicas_write_nothing(tmp_path: Path) -> None:
    h = handle(str(tmp_path / "out"), leader=False)
    h.track.params({"a": 1})
    h.track.metrics({"loss": 1.0}, step=1)
    assert h.track.artifact(tmp_path) is None
    h.close()
    assert not (tmp_path / "out" / "tracking").exists()


def test_nothing_tracked_nothing_written(tmp_path: Path) -> None:
    h = handle(str(tmp_path / "out"))
    h.track.resumed(10, None)  # what resume() tells it: kept until something is tracked
    h.report(0.5, tag="loss", step=3)
    h.close()
    assert not (tmp_path / "out" / "tracking").exists()


def test_report_goes_to_a_tracked_run_and_the_step_defaults_to_the_handle_s(
    tmp_path: Path,
) -> None:
    from vtrain.progress import tracker

    base = str(tmp_path / "out")
    h = handle(base, CLOUD_ML_HP_METRIC_FILE=str(tmp_path / "metrics"))
    h.track.tags({"team": "ml"})
    h.step(41)
    assert tracker().step == 41
    h.track.metrics({"seen": 1.0})  # no step given: the handle's
    h.report(0.25, tag="loss", step=41)
    h.close()
    curves = merged(read_run(f"{base}/tracking/job-7"))
    assert curves == {"seen": [(41, 1.0)], "loss": [(41, 0.25)]}


def test_a_resume_found_by_the_handle_is_marked(tmp_path: Path) -> None:
    base = str(tmp_path / "out")

    class Resuming(Handle):
        def _resume(self, *objects: Any, **options: Any) -> Resumed:
            return Resumed(done=20, uri=f"{base}/checkpoints/step-20")

    h = Resuming(handle(base).info, is_leader=True, environ=handle(base).environ)
    h.track.metrics({"loss": 1.0}, step=1)
    h.resume()
    h.close()
    [mark] = [r for r in read_run(f"{base}/tracking/job-7") if r["kind"] == RESUME]
    assert mark["step"] == 20 and mark["from"].endswith("step-20")


def test_a_failing_backend_never_fails_the_loop_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[int] = []

    def down(lines: list[bytes]) -> None:
        calls.append(len(lines))
        raise ConnectionRefusedError("the server is down")

    sender = Sender(down, "tracking run job")
    with caplog.at_level(logging.INFO, logger="vtrain"):
        started = time.perf_counter()
        for i in range(10_000):
            sender.put(b"x%d\n" % i)
        assert time.perf_counter() - started < 5  # no wait on the backend (a generous bound)
        time.sleep(2.5)
        sender.close(timeout=1)
    said = [r.getMessage() for r in caplog.records]
    assert sum("cannot write" in s and "the server is down" in s for s in said) == 1, said
    assert any("10000 records not written" in s for s in said), said
    assert calls  # it tried


def test_a_full_queue_drops_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    written: list[bytes] = []
    sender = Sender(written.extend, "tracking run job", most=5)
    with caplog.at_level(logging.INFO, logger="vtrain"):
        for i in range(8):
            sender.put(b"%d" % i)
        sender.close()
    assert written == [b"0", b"1", b"2", b"3", b"4"]
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "dropping new ones" in said and "3 records dropped in all" in said

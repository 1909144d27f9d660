"""The leader's posts to a TrainJob's status: KEP-2779's body, over real TLS, with the token.

The stand-in (the rehearsal's, `vtrain.local.trainjob_status`) checks each post as the Trainer's
status server does; the reporter is vtrain's own, reading this process's progress
tracker as a training loop marks it. Then a server that refuses, and one that is
gone: one line each, never the token, and the loop's marks unchanged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from trainjob_status_server import StatusServer, problem, start

from vtrain.progress import tracker
from vtrain.progress.tracker import fresh
from vtrain.trainjob.status_payload import body
from vtrain.trainjob.status_reporter import StatusReporter


@pytest.fixture
def status(tmp_path: Path) -> Iterator[StatusServer]:
    state, server = start(tmp_path)
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def _reporter(state: StatusServer, **kw: Any) -> StatusReporter:
    return StatusReporter(state.url, str(state.ca_file), str(state.token_file), **kw)


def test_the_posts_are_what_the_trainer_takes(status: StatusServer) -> None:
    fresh()
    progress = tracker()
    progress.total = 200
    for step in range(1, 51):
        progress.stepped(step, explicit=True)
        time.sleep(0.002)
    progress.metrics.update({"loss": 0.25, "val-rmse": float("nan")})
    reporter = _reporter(status)
    assert reporter.post()
    reporter.stop(done=True)  # the job ended well: 100%
    assert status.refused == [] and len(status.posts) == 2
    first, last = (p["trainerStatus"] for p in status.posts)
    assert first["progressPercentage"] == 25 and first["estimatedRemainingSeconds"] > 0
    metrics = {m["name"]: m["value"] for m in first["metrics"]}
    assert metrics == {"step": "50", "total_steps": "200", "loss": "0.25", "val-rmse": "nan"}
    assert last["progressPercentage"] == 100 and "estimatedRemainingSeconds" not in last


@pytest.mark.parametrize(
    ("step", "total", "metrics", "progress"),
    [
        (0, 10, {}, 0),
        (10, 10, {}, 99),  # the last step is not the end: the save is still ahead
        (5, None, {"a": 1.0}, None),
        (5, 10, {"x" * 65: 1.0, "": 2.0, "ok": 3}, 50),  # names the Trainer refuses: left out
    ],
)
def test_every_body_is_one_the_trainer_takes(
    step: int, total: int | None, metrics: dict[str, float], progress: int | None
) -> None:
    document, left = body(step, total, 2.5, metrics, time.time())
    assert problem(document) is None
    assert document["trainerStatus"].get("progressPercentage") == progress
    assert all(len(n) > 64 or not n for n in left)


def test_a_refusing_server_gets_one_line_without_the_token(
    status: StatusServer, caplog: pytest.LogCaptureFixture
) -> None:
    status.refuse_with = 422
    reporter = _reporter(status)
    with caplog.at_level(logging.INFO, logger="vtrain"):
        assert not reporter.post() and not reporter.post()
        status.refuse_with = None
        assert reporter.post()
    said = [r.getMessage() for r in caplog.records]
    assert len([m for m in said if "cannot post" in m]) == 1, said
    assert "HTTP 422" in said[0] and "takes posts again" in said[-1]
    assert status.token() not in caplog.text


def test_a_certificate_the_trainer_s_ca_did_not_sign_is_refused(
    status: StatusServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    _, foreign = start(other)  # a CA of its own: the client trusts only the Trainer's
    try:
        url = f"https://127.0.0.1:{foreign.server_address[1]}" + status.url.split(":", 2)[2][5:]
        reporter = StatusReporter(url, str(status.ca_file), str(status.token_file))
        assert not reporter.post()
    finally:
        foreign.shutdown()
        foreign.server_close()
    assert "CERTIFICATE_VERIFY_FAILED" in caplog.text


def test_a_server_that_is_gone_never_holds_the_loop(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    reporter = StatusReporter(f"https://127.0.0.1:{port}/x", None, None, every=0.05)
    fresh()
    reporter.start()
    slowest = 0.0
    for step in range(1, 2001):
        began = time.perf_counter()
        tracker().stepped(step, explicit=True)
        slowest = max(slowest, time.perf_counter() - began)
    reporter.stop(done=False)
    assert slowest < 0.1, slowest  # a mark is attribute writes: never a wait for the post
    assert reporter.posted == 0


def test_a_missing_ca_file_is_said_and_never_raised(
    status: StatusServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reporter = StatusReporter(status.url, str(tmp_path / "no-ca.crt"), str(status.token_file))
    assert not reporter.post()
    assert "cannot post to the TrainJob's status" in caplog.text

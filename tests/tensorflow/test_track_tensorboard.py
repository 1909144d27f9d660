"""`handle.track`'s TensorBoard events, read back by TensorBoard's own reader.

Two attempts of one run: the first logs steps 1 to 35 and is lost; the second resumes
from the commit of step 30 and logs 31 to 40. TensorBoard shows each step once, the
second attempt's at 31 to 35 (its own rule for a restarted job, which the resume's
SessionLog START asks for).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from vtrain.storage import open_location
from vtrain.track import Track, merged, read_run
from vtrain.track.sinks import made


def test_tensorboard_reads_the_run_each_step_once(tmp_path: Path) -> None:
    logs, record = tmp_path / "logs", tmp_path / "tracking"

    def attempt(resumed: int | None, steps: range, scale: float) -> None:
        track = Track(
            leader=True,
            run="job",
            folder=lambda: open_location(str(record)),
            backends=made(("tensorboard",), "job", lambda: open_location(str(logs)), {}),
        )
        if resumed is not None:
            track.resumed(resumed, "step-30")
        for step in steps:
            track.metrics({"loss": scale / step, "accuracy": 1 - 1 / step}, step=step)
        track.close()

    attempt(None, range(1, 36), 1.0)
    attempt(30, range(31, 41), 2.0)
    assert len(list(logs.glob("events.out.tfevents.*"))) == 2  # a file per attempt
    reader = EventAccumulator(str(logs))
    reader.Reload()
    assert set(reader.Tags()["scalars"]) == {"loss", "accuracy"}
    loss = [(e.step, e.value) for e in reader.Scalars("loss")]
    assert [s for s, _ in loss] == list(range(1, 41))  # each step once
    assert dict(loss)[33] == pytest.approx(2.0 / 33)  # the second attempt's
    assert dict(loss)[30] == pytest.approx(1.0 / 30)
    # The same curve as the run's own record merges it.
    ours = dict(merged(read_run(str(record)))["loss"])
    assert all(abs(ours[s] - v) < 1e-6 for s, v in loss)

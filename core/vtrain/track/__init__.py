"""Experiment tracking: one run per job (and per trial), written by the leader, across restarts.

`handle.track` is the one place a script logs to (`vtrain.track.session.Track`).
Each start of the leader is an attempt of the same run; every record names its
attempt, and `handle.resume` marks where each attempt resumed. Without a backend
configured, the run is JSON Lines in the job's output folder, `tracking/attempt-<k>.jsonl`
beside the model; `read_run` reads it back.
"""

from vtrain.track.reader import read_run
from vtrain.track.records import merged, series
from vtrain.track.session import Track

__all__ = ["Track", "merged", "read_run", "series"]

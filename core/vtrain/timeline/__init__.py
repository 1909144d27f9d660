"""A job's timeline: each trainer's events, and what `vtrain local run` sees, one file each.

`recorder()` is this process's (`vtrain.timeline.recorder`); the events and where they
go are `vtrain.timeline.events`; `read_job` reads a job's folder back.
"""

from vtrain.timeline.recorder import recorder

__all__ = ["recorder"]

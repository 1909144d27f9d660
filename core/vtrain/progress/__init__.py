"""Progress: each trainer's steps, step rate and last commit, and the watchdog that reads them.

The handle marks progress (`handle.step()`, `save_checkpoint`, the stream adapters, each
plugin's callbacks) in this process's `Tracker`, a few attribute writes per step. The
watchdog's thread (`vtrain.progress.watchdog`) reads it once a second: it decides
whether the trainer is stuck (`vtrain.progress.bound`, a pure function) and, where
`vtrain local run` asked for it, writes it to a small file that the rehearsal's live
view and straggler check read (`vtrain.progress.file`).
"""

from vtrain.progress.tracker import Tracker, tracker

__all__ = ["Tracker", "tracker"]

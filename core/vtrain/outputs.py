"""Where a run's outputs went: the few lines a script run alone, a local job and a study end with.

The folders are the ones `RunContext` names (Vertex's layout under a local
base). When the logs hold TensorBoard event files, the last line is the command
that shows them, with how to install TensorBoard where it is missing: `pip
install tensorboard` alone, in any venv (it needs no TensorFlow, and takes the
MXNet venv's old numpy); the `lightning` extra's tensorboardX writes logs, it
does not show them. With no event files there is nothing to show, and no line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

INSTALL_TENSORBOARD = "pip install tensorboard"
EVENTS_MARK = "tfevents"
"""In the name of every event file TensorBoard reads (events.out.tfevents.<time>.<host>)."""


def _relative(path: str) -> str:
    """`path` relative to here when it is below here, else as it is."""
    if "://" in path:
        return path
    here = os.getcwd()
    if os.path.commonpath([here, os.path.abspath(path)]) != here:
        return path
    shown = os.path.relpath(path)
    return shown + os.sep if path.endswith(os.sep) and shown != "." else shown


def _shown(path: str) -> str:
    """`path` as `_relative` writes it, saying so when nothing is there."""
    if "://" in path:
        return path
    if (os.path.isdir(path) and os.listdir(path)) or os.path.isfile(path):
        return _relative(path)
    # A folder is named with its trailing separator; a file that was never written is absent.
    return f"{_relative(path)} ({'empty' if path.endswith(os.sep) else 'not written'})"


def has_events(logdir: str) -> bool:
    """True when a TensorBoard event file is anywhere below `logdir` (a bucket: assumed)."""
    if "://" in logdir:
        return True  # TensorBoard reads a bucket itself; listing it here would cost requests
    return any(EVENTS_MARK in name for _, _, files in os.walk(logdir) for name in files)


def summary(rows: Sequence[tuple[str, str]], logdir: str, *, title: str | None = None) -> str:
    """A line per (what, path), then the `tensorboard --logdir` line when `logdir` has events."""
    import importlib.util
    import shlex

    width = max(len(what) for what, _ in rows)
    indent = "  " if title else ""
    lines = [f"{indent}{what:<{width}}  {_shown(path)}" for what, path in rows]
    if has_events(logdir):
        view = f"{indent}tensorboard --logdir {shlex.quote(_relative(logdir))}"
        if importlib.util.find_spec("tensorboard") is None:
            view += f"  (TensorBoard is not installed here: {INSTALL_TENSORBOARD})"
        lines.append(view)
    return "\n".join([*([title] if title else []), *lines])


def print_outputs(environ: Mapping[str, str] | None = None, *, file: TextIO | None = None) -> None:
    """At a script's end, when it ran alone: where its model, checkpoints, logs and metric are.

    Printed to `file` (default standard output); `environ` (default `os.environ`) says
    whether the script ran alone and where its folders are. Under a platform, `vtrain
    local run` or `vtrain tune` it prints nothing: the job's folders are the job's to
    announce, once, not each replica's.
    """
    from vtrain.context import RunContext, runs_alone

    env = os.environ if environ is None else environ
    if not runs_alone(env):
        return
    ctx = RunContext.from_env(env)
    rows = [
        ("model", ctx.model_dir),
        ("checkpoints", ctx.checkpoint_dir),
        ("TensorBoard logs", ctx.tensorboard_dir),
        ("tuning metric", ctx.metric_file),
    ]
    text = summary(rows, ctx.tensorboard_dir, title="outputs of this run:")
    # Asked for by the script, to the file it names: a result, not one of vtrain's notes.
    stream = sys.stdout if file is None else file
    stream.write(text + "\n")
    stream.flush()

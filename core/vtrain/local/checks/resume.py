"""The `resume` check: a restart that went back to work already committed.

A restart after --kill that found committed steps must go on from the newest. It
went back when it then commits a step no later than the newest (vtrain's layout:
``step-N/COMMIT.json``), or, in another layout, writes a numbered checkpoint file
older than one an earlier run had written (``ckpt-1.pt`` after ``ckpt-5.pt``): its
loop started again. What the log says (``step 0``, ``step 1/40``) decides nothing.

What a run wrote comes from the watcher, whoever wrote it; the markers' times add
the commits no write names (without the watcher; a folder renamed into place).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from vtrain.local.evidence import Evidence, Run
from vtrain.local.verdict import Finding

FIX = (
    "resume from the newest committed step at start (vtrain: "
    "`found = handle.resume(model, optimizer)`, then train from step `found.done`)"
)
_NUMBER = re.compile(r"[0-9]+")
# vtrain's layout, also as a save in progress: step-<12 digits>, .tmp-step-<12 digits>-<hex>.
_STEP = re.compile(r"(?:\.tmp-)?step-([0-9]{12})(?:-[0-9a-f]+)?")


def steps_named(paths: Iterable[str]) -> set[int]:
    """The steps of vtrain's layout that `paths` (relative to the checkpoint folder) save."""
    steps = set()
    for path in paths:
        for part in path.split(os.sep)[:3]:  # a trial's subfolder, then the step
            match = _STEP.fullmatch(part)
            if match:
                steps.add(int(match.group(1)))
                break
    return steps


def unclaimed(
    starts: Sequence[float], markers: Iterable[tuple[int, float]], claimed: set[int]
) -> list[set[int]]:
    """The commits no run's writes name, for each restart (given its start time): each marker
    ``(step, mtime)`` not in `claimed` goes to the first restart in the order given
    (`_in_order`) that had started by then."""
    found: list[set[int]] = [set() for _ in starts]
    for step, mtime in markers:
        if step in claimed:
            continue
        for steps, started in zip(found, starts, strict=True):
            if mtime >= started:
                steps.add(step)
                break
    return found


def went_back(earlier: Iterable[str], later: Iterable[str]) -> tuple[str, str] | None:
    """``(file, newer)``: a numbered file `later` wrote older than `newer`, one of the same
    name `earlier` wrote (``ckpt-1.pt`` and ``ckpt-5.pt``); None when it went on.

    A file written again under the same name and number (``latest.pt``, ``model_v2.pt``)
    is no evidence either way: a loop that resumes rewrites it too.
    """
    newest: dict[str, tuple[tuple[int, ...], str]] = {}
    for path in earlier:
        numbers = _numbers(path)
        key = _NUMBER.sub("#", path)
        if numbers and (key not in newest or numbers > newest[key][0]):
            newest[key] = (numbers, path)
    for path in sorted(later):
        key = _NUMBER.sub("#", path)
        if key in newest and _numbers(path) < newest[key][0]:
            return path, newest[key][1]
    return None


def resume(ev: Evidence) -> list[Finding]:
    """A replica restarted after --kill that went back to work already committed."""
    folder = ev.checkpoint_dir
    restarts = [r for r in _in_order(ev) if r.after_kill is not None and r.committed is not None]
    if not restarts:
        return []
    written = {id(run): _written_below(run, folder) for run in ev.runs}
    claimed = set().union(*(steps_named(paths) for paths in written.values()))
    guessed = unclaimed([r.started for r in restarts], _markers(folder), claimed)
    findings = []
    for run, maybe in zip(restarts, guessed, strict=True):
        newest = run.committed
        assert newest is not None
        # A marker no write names is held to "earlier than the newest": the newest itself
        # may be a peer's commit, landed as this run started (before its folder was read).
        again = sorted(
            {s for s in steps_named(written[id(run)]) if s <= newest}
            | {s for s in maybe if s < newest}
        )
        if again:
            findings.append(
                _finding(
                    ev,
                    run,
                    f"committed step {again[0]} although step {newest} was committed "
                    "when it started",
                )
            )
            continue
        earlier = [p for o in ev.runs if o.started < run.started for p in written[id(o)]]
        earlier += _older_files(folder, run.started)
        back = went_back(_other_layout(earlier), _other_layout(written[id(run)]))
        if back:
            findings.append(
                _finding(
                    ev,
                    run,
                    f"wrote {back[0]} after {back[1]} was there",
                )
            )
    return findings


def _finding(ev: Evidence, run: Run, what: str) -> Finding:
    return Finding(
        "resume",
        run.name,
        f"restarted after --kill {run.after_kill} and {what} in the checkpoint folder "
        f"({ev.checkpoint_dir}): its loop started over; on Vertex every restart would redo "
        "the work, and a job preempted often never ends",
        FIX,
    )


def _in_order(ev: Evidence) -> list[Run]:
    """The runs, the leader's first, each replica's newest first: a commit no write names is
    most likely the leader's, and of its run alive at the time."""
    rank = {name: n for n, name in enumerate(ev.hosts)}
    return sorted(ev.runs, key=lambda r: (rank.get(r.name, len(rank)), -r.number))


def _numbers(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in _NUMBER.findall(path))


def _written_below(run: Run, folder: str) -> list[str]:
    """What `run` wrote below `folder`, relative to it."""
    top = os.path.join(os.path.abspath(folder), "")
    return sorted(
        {
            os.path.relpath(p, top)
            for kind, p in run.probed()
            if kind == "write" and p.startswith(top)
        }
    )


def _other_layout(paths: Iterable[str]) -> list[str]:
    """`paths` outside vtrain's step folders: those are judged by their commits."""
    return [p for p in paths if not steps_named([p])]


def _markers(folder: str) -> list[tuple[int, float]]:
    """``(step, mtime)`` of each commit marker there now (a trial's subfolder too)."""
    from vtrain.checkpoints.layout import MARKER, parse_step_folder

    found = []
    for top, dirs, _ in _walk(folder, 2):
        for name in dirs:
            step = parse_step_folder(name)
            if step is not None:
                try:
                    found.append((step, os.stat(os.path.join(top, name, MARKER)).st_mtime))
                except OSError:
                    continue
    return found


def _older_files(folder: str, started: float) -> list[str]:
    """Files there now, relative to `folder`, last written before `started`: they were there
    before that run, whoever wrote them."""
    found = []
    for top, _, files in _walk(folder, 3):
        for name in files:
            path = os.path.join(top, name)
            try:
                if os.stat(path).st_mtime < started:
                    found.append(os.path.relpath(path, folder))
            except OSError:
                continue
    return found


def _walk(folder: str, depth: int) -> Iterable[tuple[str, list[str], list[str]]]:
    """`os.walk` of `folder` and its subfolders `depth` - 1 levels down."""
    for top, dirs, files in os.walk(folder):
        level = 0 if top == folder else os.path.relpath(top, folder).count(os.sep) + 1
        if level >= depth - 1:
            dirs[:] = []
        yield top, dirs, files

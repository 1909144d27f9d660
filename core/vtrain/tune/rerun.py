"""A rerun of `vtrain tune` into a folder that already holds a study: go on with it, or not.

The same command and search space resume the study (a larger max_trial_count adds
trials to it). Another command, search space or cluster shape is refused, with
both commands named: the old table must never stand for the new command. The
user says which study they mean: `--resume` goes on with the study on record
(its own command, search space, cluster shape and seed), `--new-study` moves it
aside to ``<folder>.N`` and starts a new one in the folder.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from vtrain.errors import UsageError
from vtrain.local.folder_lock import LOCK_FILE
from vtrain.tune.results import RESULTS_FILE, Recorded, read_recorded
from vtrain.tune.runner import Replicas
from vtrain.tune.study import Study

# What a study's folder holds: study.json (and the temporary file its atomic rewrite
# leaves when killed), one folder per trial, named by its number, and the study's lock.
_STUDY_ENTRY = re.compile(rf"[0-9]+|{re.escape(RESULTS_FILE)}(\..*)?|{re.escape(LOCK_FILE)}")


@dataclass(frozen=True)
class Settled:
    """What this `vtrain tune` runs, once the study already in its folder is accounted for."""

    study: Study
    command: tuple[str, ...]
    replicas: Replicas
    seed: int
    recorded: Recorded | None
    """The study this run goes on with; None for a new one."""
    notes: tuple[str, ...] = ()
    """Lines that say what was decided, for stderr."""
    set_aside: bool = False
    """The study in the folder moves aside (`set_aside`) before this one starts."""


def shown_command(command: Sequence[str], replicas: Replicas) -> str:
    """A command as a shell takes it, with the local cluster each trial runs on, if any."""
    counts = asdict(replicas)
    text = shlex.join(command) if command else "(no command)"
    flags = [f"--{name} {n}" for name, n in counts.items() if n]
    return f"`{text}`" + (f" (with {' '.join(flags)})" if flags else "")


def _replicas(recorded: Recorded) -> Replicas:
    """The cluster shape on record; a count it lacks (an early vtrain's file) is 0."""
    return Replicas(**{name: recorded.replicas.get(name, 0) for name in asdict(Replicas())})


def _changes(recorded: Recorded, study: Study, command: Sequence[str], replicas: Replicas) -> str:
    """What differs between the study on record and this run of it; '' when nothing does."""
    changed = []
    # A file an early vtrain wrote has no command: nothing to compare it with.
    if recorded.command is not None and (
        tuple(command) != recorded.command or replicas != _replicas(recorded)
    ):
        changed.append(
            f"it ran {shown_command(recorded.command, _replicas(recorded))}, "
            f"not {shown_command(command, replicas)}"
        )
    if recorded.study.search_space() != study.search_space():
        changed.append("its metric, search space or algorithm differ from the study file's")
    return "; ".join(changed)


def settle(
    output_dir: str,
    study: Study,
    command: Sequence[str],
    replicas: Replicas,
    seed: int,
    *,
    resume: bool = False,
    new_study: bool = False,
) -> Settled:
    """Decide what to run in `output_dir`: refuse an ambiguous rerun, resume, or start afresh."""
    results_file = os.path.join(output_dir, RESULTS_FILE)
    recorded = read_recorded(results_file)
    if recorded is None:
        if resume:
            raise UsageError(
                "there is no study here to resume",
                source=output_dir,
                hint="run it without --resume to start it, or give the --output-dir it ran in",
            )
        return Settled(study, tuple(command), replicas, seed, None)
    if new_study:
        _check_movable(output_dir)  # before anything runs: refused, nothing has changed
        return Settled(study, tuple(command), replicas, seed, None, set_aside=True)
    changed = _changes(recorded, study, command, replicas)
    if resume:
        notes = []
        if changed:
            notes.append(f"vtrain tune: resuming the study in {output_dir} as run: {changed}")
        # The study on record, whole, when its search space is not the file's: a study's
        # trials are only comparable within one search space.
        same = recorded.study.search_space() == study.search_space()
        return Settled(
            study if same else recorded.study,
            recorded.command if recorded.command is not None else tuple(command),
            _replicas(recorded),
            recorded.seed,
            recorded,
            tuple(notes),
        )
    if changed:
        raise UsageError(
            f"this folder holds another study: {changed}",
            source=output_dir,
            hint="add --resume to go on with that study as it was run, or --new-study to start "
            f"a new one here (that one is then kept in {_free_name(output_dir)}), or give "
            "--output-dir a folder of its own",
        )
    return Settled(study, tuple(command), replicas, seed, recorded)


def _free_name(output_dir: str) -> str:
    """``<folder>.1``, or the first of ``.2``, ``.3``... that does not exist."""
    folder = os.path.normpath(output_dir)
    if os.path.basename(folder) in ("", ".", ".."):  # `--output-dir .`: name it, not "..1"
        folder = os.path.abspath(folder)
    n = 1
    while os.path.lexists(f"{folder}.{n}"):
        n += 1
    return f"{folder}.{n}"


def set_aside(output_dir: str) -> str:
    """Move the study in `output_dir` to ``<folder>.N``, whole; return where it went.

    Only a folder that holds nothing but the study moves: a folder given by hand may
    hold other things (`--output-dir .`), and those stay where they are.
    """
    _check_movable(output_dir)
    target = _free_name(output_dir)
    os.rename(output_dir, target)
    return target


def _check_movable(output_dir: str) -> None:
    others = sorted(e for e in os.listdir(output_dir) if not _STUDY_ENTRY.fullmatch(e))
    if others:
        raise UsageError(
            "cannot move the study aside: its folder holds other things too",
            source=output_dir,
            value=others[:5],
            expected="a folder with only study.json and the trials' folders",
            hint="give --output-dir a folder of its own for the new study",
        )

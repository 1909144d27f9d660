"""`handle.resume(model)` and `handle.best()`: load the newest (or best) checkpoint that is whole.

Resume looks in two places: the committed steps `handle.model_checkpoint()` and
`handle.preemption_callback()` wrote, and the files a plain ModelCheckpoint
wrote into the checkpoint folder. It takes whichever is furthest into training
(a committed step on a tie: it is verified byte for byte), and when that one
turns out torn it warns, names it, and takes the next. A file that is whole but
does not load (a changed model) is an error, not a reason to go back in time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from vtrain.checkpoints import CheckpointManager
from vtrain.data.saved_position import read_position
from vtrain.errors import CheckpointError
from vtrain.log import logger
from vtrain.storage.location import Location
from vtrain_tensorflow import plain_checkpoints
from vtrain_tensorflow.keras_checkpoint import (
    RECORD,
    KerasCheckpoint,
    load_into,
    read_record,
    records,
)
from vtrain_tensorflow.model_checkpoint import better

Loader = Callable[[Any, str, Any], None]
"""Loads the file at a path into a model, under a strategy: `load_into` or a variant."""

log = logger(__name__)


def _committed(manager: CheckpointManager) -> Iterator[KerasCheckpoint]:
    """Records of the committed Keras steps, newest first, read one at a time as needed."""
    for step in reversed(manager.steps()):
        record = read_record(manager, step)
        if record is not None:
            yield record


def _load_committed(
    model: Any, manager: CheckpointManager, step: int, strategy: Any, load: Loader = load_into
) -> KerasCheckpoint | None:
    """Restore `step` (every byte checked) into `model`; its record, or None if it is damaged."""
    try:
        checkpoint = manager.restore(step)
    except CheckpointError as e:
        log.warning(f"vtrain: skipped a damaged checkpoint: {e}")
        return None
    assert checkpoint is not None and checkpoint.directory is not None
    with checkpoint:  # removes the temporary copy a FUSE or gs:// restore makes
        with open(os.path.join(checkpoint.directory, RECORD), "rb") as f:
            record = KerasCheckpoint.from_json(f.read(), checkpoint.uri)
        load(model, os.path.join(checkpoint.directory, record.model_file), strategy)
        data = read_position(checkpoint.directory, checkpoint.uri)
    return replace(record, data=data)


def _load_plain(
    model: Any, location: Location, found: plain_checkpoints.PlainFile, strategy: Any
) -> KerasCheckpoint | None:
    """Load a plain ModelCheckpoint file into `model` if it is whole; warn and None if torn."""
    uri = location.join(found.name).uri
    with plain_checkpoints.local_copy(location, found.name) as path:
        why = plain_checkpoints.damage(path)
        if why is not None:
            log.warning(
                f"vtrain: skipped {uri}: torn or incomplete ({why}); trying an older checkpoint"
            )
            return None
        load_into(model, path, strategy)
    return KerasCheckpoint(
        step=0,
        epoch=found.epoch - 1,
        batch=found.batch,
        weights_only=not found.name.endswith(".keras"),
        uri=uri,
    )


def continued(manager: CheckpointManager, environ: Mapping[str, str]) -> CheckpointManager:
    """`manager`, or the old job's (VTRAIN_RESUME_FROM) until this job commits a step of its own.

    Keras resumes step by step (its records say which is furthest), so it reads the
    folder itself rather than through `restore()`'s own fallback to the old job's.
    """
    if manager.resume_from is None or manager.steps():
        return manager
    older = CheckpointManager(
        manager.resume_from, is_leader=False, per_trial=False, environ=environ
    )
    if not older.steps():
        # Asked to continue and nothing to continue from: a typo, not a fresh start.
        raise CheckpointError(
            "no committed step to continue from",
            source=manager.resume_from,
            expected="the checkpoint folder of a job that committed a Keras step",
            hint="VTRAIN_RESUME_FROM (--resume-from) names it: the old job's AIP_CHECKPOINT_DIR",
        )
    return older


def resume_from(
    model: Any,
    strategy: Any,
    *,
    manager: CheckpointManager | None,
    plain: Location | None,
    filepath: str | None = None,
) -> KerasCheckpoint | None:
    """Load the checkpoint furthest into training that is whole into `model`; None if none is."""
    committed = _committed(manager) if manager is not None else iter(())
    files = iter(plain_checkpoints.find(plain, filepath) if plain is not None else ())
    ours, theirs = next(committed, None), next(files, None)
    while ours is not None or theirs is not None:
        if theirs is None or (ours is not None and ours.progress >= theirs.progress):
            assert ours is not None and manager is not None
            loaded = _load_committed(model, manager, ours.step, strategy)
            ours = next(committed, None)
        else:
            assert plain is not None
            loaded = _load_plain(model, plain, theirs, strategy)
            theirs = next(files, None)
        if loaded is not None:
            return loaded
    return None


def best_of(manager: CheckpointManager) -> KerasCheckpoint | None:
    """The committed record with the best monitored value (the newest of equals); None if none."""
    found = [r for r in records(manager) if r.value is not None and r.mode in ("min", "max")]
    if not found:
        return None
    # The monitor the newest save watched: an older run may have watched something else.
    latest = found[-1]
    best: KerasCheckpoint | None = None
    for record in found:  # oldest first, so that of equal values the newest wins
        if record.monitor != latest.monitor or record.mode != latest.mode:
            continue
        assert record.value is not None and latest.mode is not None
        if best is None or not better(best.value, record.value, latest.mode):  # type: ignore[arg-type]
            best = record
    return best


def load_best(
    model: Any, manager: CheckpointManager, strategy: Any, load: Loader = load_into
) -> KerasCheckpoint | None:
    """Load the best committed checkpoint into `model`; its record, or None when there is none."""
    best = best_of(manager)
    if best is None:
        return None
    record = _load_committed(model, manager, best.step, strategy, load)
    if record is None:
        raise CheckpointError(
            "the best checkpoint does not pass its manifest check",
            source=best.uri,
            value=best.step,
            expected="an intact step",
            hint="the warning above names the damaged file",
        )
    return best

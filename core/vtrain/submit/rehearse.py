"""A job document as a local rehearsal: the `Plan.from_options` arguments that reproduce it.

Each pool becomes that many local replicas, running the pool's command (or
the local COMMAND in place of the document's program: the image's entrypoint,
`python -m trainer.task`) with the program's args and the pool's env; a tuning
job runs one trial, with that trial's flags, id and folder. Each engine reads
its own document (`<engine>/rehearse.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from vtrain.submit.document import JobDocument
from vtrain.submit.engines import ENGINES
from vtrain.submit.rehearsal import Rehearsal

__all__ = ["Rehearsal", "rehearsal"]


def rehearsal(
    job: JobDocument, local_command: Sequence[str], trial: str | None, output_dir: str
) -> Rehearsal:
    """The rehearsal of `job`; `local_command` replaces the document's program when given."""
    return ENGINES[job.platform].rehearse(job, list(local_command), trial, output_dir)

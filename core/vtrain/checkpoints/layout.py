"""Names inside a checkpoint folder, and the checks that keep them inside it.

```
<checkpoint dir>/
  step-000000000042/            one folder per step; zero-padded so name order = step order
    COMMIT.json                 the commit marker: the manifest, written last
    data-1f2e3d4c5b6a7988/      the files, in a folder named by the marker
  .tmp-step-000000000043-<hex>/ a save in progress on a local disk (renamed when done)
  .del-step-000000000040-<hex>/ a step being deleted on a local disk
```

A step counts only when its marker is present and valid; everything else is a
leftover of a save or delete that did not finish, and the writer removes it.
"""

from __future__ import annotations

import os
import re

from vtrain.errors import CheckpointError

STEP_PREFIX = "step-"
STEP_DIGITS = 12
MAX_STEP = 10**STEP_DIGITS - 1
MARKER = "COMMIT.json"
DATA_PREFIX = "data-"
TMP_PREFIX = ".tmp-"
DELETE_PREFIX = ".del-"

_STEP_FOLDER = re.compile(rf"{STEP_PREFIX}([0-9]{{{STEP_DIGITS}}})")
_DATA_FOLDER = re.compile(rf"{DATA_PREFIX}[0-9a-f]{{16}}")
_LEFTOVER = re.compile(
    rf"({re.escape(TMP_PREFIX)}|{re.escape(DELETE_PREFIX)}){STEP_PREFIX}[0-9]{{{STEP_DIGITS}}}-[0-9a-f]+"
)


def check_step(step: object, where: str) -> int:
    """`step` if it is an int from 0 to MAX_STEP; else raise."""
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
        raise CheckpointError(
            "not a checkpoint step",
            source=where,
            value=step,
            expected=f"an int from 0 to {MAX_STEP}",
        )
    return step


def step_folder(step: int) -> str:
    """The folder name of a step: `step-` and twelve digits."""
    return f"{STEP_PREFIX}{step:0{STEP_DIGITS}d}"


def parse_step_folder(name: str) -> int | None:
    """The step a folder name stands for, or None if it is not exactly a step folder."""
    match = _STEP_FOLDER.fullmatch(name)
    return int(match.group(1)) if match else None


def is_leftover(name: str) -> bool:
    """True for the temporary folders a local save or delete leaves when it is killed."""
    return _LEFTOVER.fullmatch(name) is not None


def new_data_folder() -> str:
    """A fresh data folder name; fresh, so a new save never writes over committed files."""
    return DATA_PREFIX + os.urandom(8).hex()


def check_data_folder(name: object, where: str) -> str:
    """`name` if it is a data folder name as `new_data_folder` makes them; else raise."""
    if not isinstance(name, str) or not _DATA_FOLDER.fullmatch(name):
        raise CheckpointError(
            "manifest names a bad data folder",
            source=where,
            value=name,
            expected=f"{DATA_PREFIX} and 16 hex digits",
        )
    return name


def token() -> str:
    """A short random suffix for temporary names."""
    return os.urandom(6).hex()

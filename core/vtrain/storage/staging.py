"""Local staging folders that carry their process's name, and the removal of those it left.

A save to FUSE or gs:// runs its writer into a local folder first, and a restore
from there copies into one. A process killed meanwhile (SIGKILL, the OOM killer,
a VM restart) never removes it: a checkpoint's size, left in the temporary
folder at every kill. So each such folder is named for its process (pid and
start time), and the next manager that starts removes those whose process is
gone, as a local save's `.tmp-` folders are removed beside the steps.
"""

from __future__ import annotations

import os
import re
import shutil

from vtrain.storage.owner import Owner, me, running

KINDS = ("stage", "save", "restore")
"""What a staging folder is for: a background snapshot, a writer's upload, a restored copy."""

_NAME = re.compile(rf"vtrain-(?:{'|'.join(KINDS)})-(\d+)\.(\d+)-")


def staging_prefix(kind: str) -> str:
    """The name prefix of a staging folder of this process: ``vtrain-<kind>-<pid>.<start>-``."""
    assert kind in KINDS, kind
    owner = me()
    return f"vtrain-{kind}-{owner.pid}.{owner.start or 0}-"


def make_staging(kind: str) -> str:
    """A fresh staging folder of this process, in the temporary folder."""
    import tempfile  # here, not at the top: `import vtrain` stays light

    return tempfile.mkdtemp(prefix=staging_prefix(kind))


def remove_stale_staging(folder: str | None = None) -> list[str]:
    """Remove the staging folders (in `folder`, default the temporary one) whose process is
    gone; return their paths. A folder of a running process, or of another user, stays."""
    if folder is None:
        import tempfile

        folder = tempfile.gettempdir()
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    here = me()
    removed = []
    for name in names:
        match = _NAME.match(name)
        if match is None:
            continue
        pid, start = int(match.group(1)), int(match.group(2))
        # The temporary folder is this machine's: its owner ran here, in this boot or before.
        owner = Owner(pid, here.host, start or None, None)
        if running(owner) is not False:
            continue
        path = os.path.join(folder, name)
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
    return removed

"""The errors of a job that cannot start: its folders, its logs, its keeper, its private folder."""

from __future__ import annotations

import os

from vtrain.errors import LaunchError
from vtrain.os_hints import OUT_OF_DESCRIPTORS, hint_for

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from vtrain.local.plan import Plan


def unwritable(plan: Plan, e: OSError) -> LaunchError:
    """The error for the job's folders or logs that could not be made or opened."""
    if e.errno in OUT_OF_DESCRIPTORS:  # the limit, not the folder: say so
        return LaunchError(
            f"cannot open the job's logs ({e.strerror})",
            value=f"{plan.size} replicas",
            hint=hint_for(e),
        )
    return LaunchError(
        f"cannot write the job's folders ({e.strerror or e})",
        source="--output-dir",
        value=plan.output_dir,
        expected="a folder this user can create and write",
        hint=hint_for(e),
    )


def no_keeper(plan: Plan, e: OSError) -> LaunchError:
    """The error for a keeper process that could not be started (a process or fd limit)."""
    return LaunchError(
        f"cannot start the job's keeper process ({e.strerror or e})",
        value=f"{plan.size} replicas",
        hint=hint_for(e, "stop other programs, or raise `ulimit -u` and `ulimit -n`"),
    )


def no_private_folder(e: OSError) -> LaunchError:
    """The error for the job's private folder (`vtrain.local.serving`) that could not be made."""
    return LaunchError(
        f"cannot create the job's private folder ({e.strerror or e})",
        source="TMPDIR",
        value=os.environ.get("TMPDIR") or "/tmp",
        expected="a folder this user can create folders in",
        hint=hint_for(e),
    )

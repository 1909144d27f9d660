"""The variables vtrain writes into a process, and the rule every id that becomes a folder obeys.

A leaf: the cluster readers and the run context both read these, and it imports
nothing of vtrain but its errors.
"""

from __future__ import annotations

import re

from vtrain.errors import ConfigError

# Variables vtrain itself writes into a process to say where it sits in a job. A process
# started from one (a shell inside a job, a replica that starts a job of its own) must not
# inherit them: `vtrain local run` strips them all from what its replicas inherit.
LEADER = "VTRAIN_LEADER"
"""The replica that writes shared artifacts, ``role:index``; the framework plugins export it."""
LOCAL_LAUNCH = "VTRAIN_LOCAL_LAUNCH"
"""Set by vtrain's per-GPU launcher on each process it starts; read like torchrun's marker."""
SERVES_FILE = "VTRAIN_SERVES_FILE"
"""Set by `vtrain local run` per replica: the file a serving replica creates to say it serves."""
PROGRESS_FILE = "VTRAIN_PROGRESS_FILE"
"""Set by `vtrain local run` per replica: where its trainer writes its progress
(`vtrain.progress.file`), for the live view and the straggler check."""
TIMELINE_FILE = "VTRAIN_TIMELINE_FILE"
"""Set by `vtrain local run` per process: the file its trainer records its timeline in
(`vtrain.timeline.recorder`), named for its replica and attempt."""
READER = "VTRAIN_READER"
"""This replica's place among the readers of the training and test data, ``rank/readers``;
exported by a plugin whose replicas read otherwise than the trainers in rank order."""
FRAMEWORK_VARIABLES = "VTRAIN_FRAMEWORK_VARIABLES"
"""The framework's own variables a plugin set in this process (its `environment_prefixes`),
comma-separated: `vtrain local run` keeps them, and this, out of a new job's replicas."""
PLACEMENT_VARIABLES = frozenset(
    {LEADER, LOCAL_LAUNCH, SERVES_FILE, PROGRESS_FILE, TIMELINE_FILE, READER, FRAMEWORK_VARIABLES}
)

# Chosen by whoever starts the job, the same on every replica: not a placement variable.
RESUME_FROM = "VTRAIN_RESUME_FROM"
"""Another job's checkpoint folder (its AIP_CHECKPOINT_DIR): a job that has committed no step
of its own resumes from that job's newest; it is only read. Set by `--resume-from`."""

# Trial and job ids become folder names; anything that could climb out of the base is refused.
_FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_folder_name(value: str, variable: str, what: str, example: str) -> str | None:
    """An id that is safe as one path component, or None when it is empty."""
    if value == "":
        return None
    if not _FOLDER_NAME.fullmatch(value) or ".." in value:
        raise ConfigError(
            f"{what} is not a plain folder name",
            source=variable,
            value=value,
            expected=f"letters, digits, '.', '_' or '-' ({example})",
        )
    return value


def check_trial_id(value: str, variable: str) -> str | None:
    """A trial id that is safe as one path component, or None when it is empty."""
    return check_folder_name(value, variable, "trial id", "Vertex uses 1, 2, 3 …")

"""The `resume` check: a restart that started over while checkpoints were committed."""

from __future__ import annotations

import re

from vtrain.local.evidence import Evidence
from vtrain.local.verdict import Finding

_STEP_ZERO = re.compile(r"\bstep\s*[:=#]?\s*0\b", re.IGNORECASE)


def resume(ev: Evidence) -> list[Finding]:
    """A replica restarted after --kill that started over while checkpoints existed."""
    findings = []
    for run in ev.runs:
        if run.after_kill is None or run.committed is None:
            continue
        if any(_STEP_ZERO.search(line) for line in run.head):
            what = (
                f"step {run.committed} was committed"
                if run.committed >= 0
                else "checkpoint files existed"
            )
            findings.append(
                Finding(
                    "resume",
                    run.name,
                    f"restarted after --kill {run.after_kill} and started at step 0 while "
                    f"{what} in AIP_CHECKPOINT_DIR ({ev.checkpoint_dir})",
                    "resume from the newest checkpoint at start (vtrain: `handle.resume()`)",
                )
            )
    return findings

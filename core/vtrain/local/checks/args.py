"""The `args` check: a script that refused the arguments the platform passes."""

from __future__ import annotations

from vtrain.local.evidence import Evidence
from vtrain.local.verdict import Finding


def args(ev: Evidence) -> list[Finding]:
    """A script that refused the arguments the platform passes (a usage error, exit 2)."""
    return [
        Finding(
            "args",
            run.name,
            f"refused its arguments ({run.refused})",
            "accept the flags the platform passes (--job-dir, the study's parameters): "
            "declare them, or use parse_known_args()",
        )
        for run in ev.runs
        if run.refused
    ]

"""The `local-disk` check: what a replica left on its own machine that others needed."""

from __future__ import annotations

import os
import re

from vtrain.local.checks.places import SHARED, model_like, relative
from vtrain.local.evidence import Evidence
from vtrain.local.verdict import Finding

_MISSING = re.compile(r"No such file or directory: '([^']+)'")


def local_disk(ev: Evidence) -> list[Finding]:
    """Model- or checkpoint-looking files on a replica's own disk, and files a peer or a later
    run of the same replica looked for there."""
    findings = []
    for run in ev.runs:
        looks = [p for p in run.written if model_like(p)]
        if looks:
            shown = ", ".join(looks[:3]) + (f" and {len(looks) - 3} more" if len(looks) > 3 else "")
            findings.append(
                Finding(
                    "local-disk",
                    run.name,
                    f"wrote {shown} on its own disk (run {run.number}): on Vertex that disk is "
                    "lost with the machine, and a restart starts without it",
                    f"save models and checkpoints to {SHARED}",
                )
            )
    for run in ev.runs:
        for missing in {m for line in run.tail for m in _MISSING.findall(line)}:
            rel = relative(run, missing)
            if rel is None:
                continue
            writers = [other for other in ev.runs if other is not run and rel in other.written]
            if writers:
                who = writers[0]
                whose = "its previous run" if who.name == run.name else who.name
                findings.append(
                    Finding(
                        "local-disk",
                        run.name,
                        f"could not find {missing}, which {whose} wrote on its own disk "
                        f"({os.path.join(who.disk.folder if who.disk else '', rel)}): "
                        "on Vertex another machine's disk is out of reach",
                        f"write it to {SHARED} and read it from there",
                    )
                )
    return findings

"""The `leader` check: the model written by several replicas or by none; the chief's metric."""

from __future__ import annotations

import os

from vtrain.local.checks.reports import tags
from vtrain.local.evidence import Evidence
from vtrain.local.verdict import Finding


def leader(ev: Evidence) -> list[Finding]:
    """The model written into one place by more than one replica, or by none; the metric
    reported by others but not by the chief, whose report the tuning service reads."""
    writers: dict[str, list[str]] = {}
    for run in ev.runs:
        for kind, path in run.probed():
            if kind == "write" and run.name not in writers.setdefault(path, []):
                writers[path].append(run.name)
    rank = {name: n for n, name in enumerate(ev.hosts)}
    findings = []
    for path, found in sorted(writers.items()):
        names = sorted(found, key=lambda name: rank.get(name, len(rank)))
        for name in names[1:]:
            findings.append(
                Finding(
                    "leader",
                    name,
                    f"wrote {path}, which {names[0]} wrote too: on Vertex they overwrite "
                    "each other's model",
                    "save the model from the chief only (vtrain: `if handle.is_chief:`)",
                )
            )
    if ev.succeeded and not _has_files(ev.model_dir):
        findings.append(
            Finding(
                "leader",
                next(iter(ev.hosts)),
                f"no replica wrote the model into AIP_MODEL_DIR ({ev.model_dir}): the job "
                "would end with nothing to deploy",
                "save the model there from the chief",
            )
        )
    if ev.metric_id:
        chief = next(iter(ev.hosts))
        reported = [n for n, path in ev.metric_files.items() if tags(path)]
        if reported and chief not in reported:
            findings.append(
                Finding(
                    "leader",
                    reported[0],
                    "reported the study's metric, but the chief did not: the tuning service "
                    "reads the chief's (workerpool0's)",
                    "report the metric from the chief",
                )
            )
    return findings


def _has_files(folder: str) -> bool:
    return any(files for _, _, files in os.walk(folder))

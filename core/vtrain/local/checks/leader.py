"""The `leader` check: the model written by several replicas or by none; the chief's metric.

Only the model's place counts: AIP_MODEL_DIR, or on AI Platform, which sets no
AIP_MODEL_DIR, the --job-dir it passes, less the folders vtrain keeps there. The
watcher sees writes anywhere on the machine; those elsewhere are other checks'.
"""

from __future__ import annotations

import os

from vtrain.local.checks import snippets
from vtrain.local.checks.reports import tags
from vtrain.local.disks import DISKS_FOLDER
from vtrain.local.evidence import Evidence
from vtrain.local.folder_lock import LOCK_FILE
from vtrain.local.output import log_path
from vtrain.local.verdict import PLATFORM_NAMES, Finding

# Whose metric the tuning service reads, as each platform names that replica.
_METRIC_READER = {"vertex": "the chief's (workerpool0's)", "aiplatform": "the master's"}


def leader(ev: Evidence) -> list[Finding]:
    """The model written into one place by more than one replica, or by none (unless the job
    writes none, --no-model); the metric reported by others but not by the chief, whose
    report the tuning service reads."""
    place = ModelPlace(ev)
    writers: dict[str, list[str]] = {}
    for run in ev.runs:
        for kind, path in run.probed():
            if kind == "write" and place.holds(path):
                names = writers.setdefault(os.path.normpath(path), [])
                if run.name not in names:
                    names.append(run.name)
    rank = {name: n for n, name in enumerate(ev.hosts)}
    where = PLATFORM_NAMES.get(ev.platform, ev.platform)
    findings = []
    for path, found in sorted(writers.items()):
        names = sorted(found, key=lambda name: rank.get(name, len(rank)))
        for name in names[1:]:
            findings.append(
                Finding(
                    "leader",
                    name,
                    f"wrote {path}, which {names[0]} wrote too: on {where} they overwrite "
                    "each other's model",
                    f"save the model from the leader only ({snippets.leader()})",
                )
            )
    if ev.succeeded and not ev.no_model and not place.has_files():
        findings.append(
            Finding(
                "leader",
                next(iter(ev.hosts)),
                f"no replica wrote the model {place.named}: the job would end with nothing "
                "to deploy",
                f"save it there from the leader ({snippets.leader()}), or, for a job that "
                "writes no model by design, rehearse with --no-model",
            )
        )
    if ev.metric_id:
        chief = next(iter(ev.hosts))
        reported = [n for n, path in ev.metric_files.items() if tags(path)]
        if reported and chief not in reported:
            reader = _METRIC_READER.get(ev.platform, "the chief's")
            findings.append(
                Finding(
                    "leader",
                    reported[0],
                    "reported the study's metric, but the chief did not: the tuning service "
                    f"reads {reader}",
                    f"report the metric from the leader ({snippets.report(ev.metric_id)})",
                )
            )
    return findings


OWN_FILES = ("timeline", "tracking", "mlflow", "verdict.json", "report.html")
"""What vtrain writes into a job's folder besides: not the job's model."""


class ModelPlace:
    """Where the platform keeps the job's model, as this rehearsal lays it out."""

    def __init__(self, ev: Evidence) -> None:
        model = os.path.normpath(ev.model_dir)
        if ev.platform == "aiplatform":
            job_dir = os.path.normpath(ev.trial_dir or os.path.dirname(model))
            self.folder = job_dir
            self.named = f"under --job-dir ({job_dir})"
            # vtrain's own there: the disks, the replicas' logs, the metric files, its default
            # checkpoints and TensorBoard folders (its CheckpointManager's), the folder's lock,
            # the job's timeline, the tracked runs, the verdict and the report.
            own = [
                os.path.join(job_dir, DISKS_FOLDER),
                os.path.dirname(log_path(job_dir, "chief")),
                *(os.path.dirname(os.path.normpath(p)) for p in ev.metric_files.values()),
                os.path.normpath(ev.checkpoint_dir),
                os.path.join(job_dir, "logs"),
                os.path.join(job_dir, LOCK_FILE),
                *(os.path.join(job_dir, name) for name in OWN_FILES),
            ]
            self.skipped = frozenset(own)
        else:
            self.folder = model
            self.named = f"into AIP_MODEL_DIR ({ev.model_dir})"
            self.skipped = frozenset()
        # The watcher names a file by its real path, the probe by the path as opened.
        self._roots = {self.folder, os.path.realpath(self.folder)}
        self._own = self.skipped | {os.path.realpath(p) for p in self.skipped}

    def holds(self, path: str) -> bool:
        """True for a file in the model's place, outside vtrain's own folders there."""
        path = os.path.normpath(path)
        return any(_below(path, root) for root in self._roots) and not any(
            _below(path, own) for own in self._own
        )

    def has_files(self) -> bool:
        """True when a file is there, outside vtrain's own folders."""
        for top, dirs, files in os.walk(self.folder):
            dirs[:] = [d for d in dirs if os.path.join(top, d) not in self.skipped]
            if any(os.path.join(top, f) not in self.skipped for f in files):
                return True
        return False


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(os.path.join(folder, ""))

"""The rehearsal's verdict: ``ready to submit``, or the findings that would fail on the cloud.

Each finding names its check (`CHECKS`), the replica, what happened and what to
do; `vtrain.local.checks` finds them, `vtrain local run` prints the verdict last
and writes it as JSON with --verdict-json. "Ready" is a statement about the
findings only: what this machine kept from being checked (``not checked: ...``)
and what no local rehearsal reproduces (``not rehearsed: ...``) follow it, a line
each, so that the verdict never implies they were.
"""

from __future__ import annotations

import json

from vtrain.frozen import Frozen

CHECKS = ("job", "kill", "storage", "local-disk", "loopback", "leader", "metric", "resume", "args")
"""The checks, in the order their findings are shown: how the job ended comes first, as
nothing else the rehearsal says means much of a job that failed."""
PLATFORM_NAMES = {
    "vertex": "Vertex",
    "aiplatform": "AI Platform",
    "kubeflow": "Kubeflow",
    "trainjob": "Kubeflow Trainer",
    "torchrun": "torchrun",
}
"""How a finding names each platform of `vtrain.local.plan.PLATFORMS`."""

VERDICT_FILE = "verdict.json"
"""In the job's folder: the verdict, as `--verdict-json` writes it (`vtrain report` reads it)."""


class Finding(Frozen):
    """What would go wrong on the platform: the check, the replica, what happened, what to do."""

    __slots__ = ("check", "replica", "detail", "fix")
    check: str
    replica: str
    detail: str
    fix: str

    def __init__(self, check: str, replica: str, detail: str, fix: str) -> None:
        self._init_from(locals())

    def line(self) -> str:
        """``  [check] replica: what happened; what to do``."""
        return f"  [{self.check}] {self.replica}: {self.detail}; {self.fix}"


class Verdict(Frozen):
    """The findings of one rehearsal; its notes; what it could not check, or rehearse."""

    __slots__ = ("findings", "notes", "not_checked", "not_rehearsed")
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    not_checked: tuple[str, ...]
    """What this machine kept the rehearsal from seeing (a class of writes...)."""
    not_rehearsed: tuple[str, ...]
    """What no rehearsal on one machine reproduces (accelerators, the network's speed...)."""

    def __init__(
        self,
        findings: tuple[Finding, ...],
        notes: tuple[str, ...] = (),
        not_checked: tuple[str, ...] = (),
        not_rehearsed: tuple[str, ...] = (),
    ) -> None:
        self._init_from(locals())

    @property
    def ready(self) -> bool:
        """True when nothing was found (what was not checked or rehearsed is said apart)."""
        return not self.findings

    def text(self) -> str:
        """The verdict line, a line per finding, per note, per thing not checked or rehearsed."""
        n = len(self.findings)
        head = (
            "verdict: ready to submit"
            if self.ready
            else (f"verdict: not ready: {n} finding{'s' if n != 1 else ''}")
        )
        lines = [
            head,
            *(f.line() for f in self.findings),
            *(f"  (note: {note})" for note in self.notes),
            *(f"  not checked: {what}" for what in self.not_checked),
            *(f"  not rehearsed: {what}" for what in self.not_rehearsed),
        ]
        return "\n".join(lines) + "\n"

    def to_json(self) -> str:
        """``{"ready": bool, "findings": [{"check", "replica", "detail"}...], "notes": [...],
        "not_checked": [...], "not_rehearsed": [...]}``."""
        findings = [
            {"check": f.check, "replica": f.replica, "detail": f"{f.detail}; {f.fix}"}
            for f in self.findings
        ]
        return json.dumps(
            {
                "ready": self.ready,
                "findings": findings,
                "notes": list(self.notes),
                "not_checked": list(self.not_checked),
                "not_rehearsed": list(self.not_rehearsed),
            },
            indent=2,
        )

"""The rehearsal's verdict: ``ready to submit``, or the findings that would fail on the cloud.

Each finding names its check (`CHECKS`), the replica, what happened and what to
do; `vtrain.local.checks` finds them, `vtrain local run` prints the verdict last
and writes it as JSON with --verdict-json.
"""

from __future__ import annotations

import json

from vtrain.frozen import Frozen

CHECKS = ("local-disk", "loopback", "leader", "metric", "resume", "args")
"""The checks, in the order their findings are shown."""


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
    """The findings of one rehearsal, and what it could not check (notes)."""

    __slots__ = ("findings", "notes")
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]

    def __init__(self, findings: tuple[Finding, ...], notes: tuple[str, ...] = ()) -> None:
        self._init_from(locals())

    @property
    def ready(self) -> bool:
        """True when nothing was found."""
        return not self.findings

    def text(self) -> str:
        """The verdict line, a line per finding, then a line per note."""
        n = len(self.findings)
        head = (
            "verdict: ready to submit"
            if self.ready
            else (f"verdict: not ready: {n} finding{'s' if n != 1 else ''}")
        )
        notes = [f"  (note: {note})" for note in self.notes]
        return "\n".join([head, *(f.line() for f in self.findings), *notes]) + "\n"

    def to_json(self) -> str:
        """``{"ready": bool, "findings": [{"check", "replica", "detail"}...], "notes": [...]}``."""
        findings = [
            {"check": f.check, "replica": f.replica, "detail": f"{f.detail}; {f.fix}"}
            for f in self.findings
        ]
        return json.dumps(
            {"ready": self.ready, "findings": findings, "notes": list(self.notes)}, indent=2
        )

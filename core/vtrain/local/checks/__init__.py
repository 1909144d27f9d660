"""The verdict's checks, one module each, over what the rehearsal saw (`Evidence`).

Each check returns its findings (`vtrain.local.verdict.CHECKS` orders them).
"""

from __future__ import annotations

from collections.abc import Callable

from vtrain.local.checks.args import args
from vtrain.local.checks.job import job, kill
from vtrain.local.checks.leader import leader
from vtrain.local.checks.local_disk import local_disk
from vtrain.local.checks.loopback import loopback
from vtrain.local.checks.metric import metric
from vtrain.local.checks.resume import resume
from vtrain.local.checks.storage import storage
from vtrain.local.evidence import Evidence
from vtrain.local.verdict import Finding, Verdict

CHECKERS: tuple[Callable[[Evidence], list[Finding]], ...] = (
    job,
    kill,
    storage,
    local_disk,
    loopback,
    leader,
    metric,
    resume,
    args,
)


def judge(ev: Evidence, notes: tuple[str, ...] = ()) -> Verdict:
    """Every check's findings over `ev`, and what it could not check or rehearse."""
    return Verdict(
        tuple(f for check in CHECKERS for f in check(ev)),
        notes,
        tuple(dict.fromkeys(ev.not_checked)),
        tuple(ev.not_rehearsed),
    )

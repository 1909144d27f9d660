"""`--kill`: a fault injected as the platform has it happen, a VM lost or preempted.

SIGKILL is a lost VM (a crash, a host failure). SIGTERM is a preemption (a spot
reclaim, a maintenance event): the VM is gone PREEMPTION_NOTICE seconds later,
whatever the replica does meanwhile, so its SIGTERM save has that long, not --grace.
"""

from __future__ import annotations

import signal

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from vtrain.local.plan import Kill

PREEMPTION_NOTICE = 30.0
"""Seconds between the SIGTERM and the SIGKILL of a preempted VM (Compute Engine's notice for
spot and preemptible VMs): how long an injected `--kill …:TERM` lets the replica save."""


def announce(kill: Kill) -> str:
    """What vtrain says as it injects `kill`: that the peers' failures that follow are expected."""
    notice = (
        f" (a preemption notice: SIGKILL in {PREEMPTION_NOTICE:g} s unless it exits)"
        if kill.signal == signal.SIGTERM
        else ""
    )
    return (
        f"--kill {kill}: sending {kill.signal.name} to {kill.replica_name}{notice}; replicas "
        "that train with it are expected to fail too, and restart"
    )


def sigkill_after(kill: Kill, grace: float) -> float | None:
    """Seconds from the injected signal to the SIGKILL that follows it (None: it is SIGKILL)."""
    if kill.signal == signal.SIGKILL:
        return None
    return PREEMPTION_NOTICE if kill.signal == signal.SIGTERM else grace


def given(kill: Kill) -> str:
    """`kill` as a user writes it: ``worker:0@30``, ``worker:0@30:TERM`` (SIGKILL unsaid)."""
    text = f"{kill.role}:{kill.index}@{kill.seconds:g}"
    return text if kill.signal == signal.SIGKILL else f"{text}:{kill.signal.name[3:]}"

"""The `job` and `kill` checks: a job that did not succeed, a --kill that never fired.

Nothing else the rehearsal found means much of a job that failed here: it would
fail there too. A --kill that never fired leaves its restart unrehearsed, while
the user believes it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vtrain.local.evidence import Evidence
from vtrain.local.plan import Kill
from vtrain.local.result import FAILED, INTERRUPTED, TIMED_OUT
from vtrain.local.verdict import PLATFORM_NAMES, Finding
from vtrain.progress.dump import is_stack_line

# A traceback's caret line (`    ^^^^^`) says where, not what.
_MARKERS = re.compile(r"[\s^~]*")
_LONGEST = 200


def last_words(tail: Sequence[str]) -> str | None:
    """The last line of `tail` that says something: not blank, not a traceback's carets, not
    a stuck trainer's stack dump (its watchdog's line before it says why)."""
    for line in reversed(tail):
        text = line.strip()
        if text and not _MARKERS.fullmatch(text) and not is_stack_line(line):
            return text if len(text) <= _LONGEST else text[: _LONGEST - 3] + "..."
    return None


def job(ev: Evidence) -> list[Finding]:
    """The job failed, timed out or was interrupted: named by the replica that ended it."""
    if ev.succeeded:
        return []
    where = PLATFORM_NAMES.get(ev.platform, ev.platform)
    outcome = ev.outcome or FAILED
    reason = ev.reason or "vtrain stopped unexpectedly"
    chief = next(iter(ev.hosts), "chief-0")
    if outcome == TIMED_OUT:
        return [
            Finding(
                "job",
                chief,
                f"the job timed out ({reason}) before the chief finished: the rehearsal "
                "never saw it succeed",
                "give it a longer --timeout, or less work to rehearse with",
            )
        ]
    if outcome == INTERRUPTED:
        return [
            Finding(
                "job",
                chief,
                f"the job was interrupted ({reason}) before the chief finished: the "
                "rehearsal never saw it succeed",
                "rehearse it to its end",
            )
        ]
    runs = [run for run in ev.runs if run.name == ev.ended_by]
    if not runs:  # not a replica's exit: vtrain's keeper, or vtrain itself
        return [
            Finding(
                "job",
                "vtrain",
                f"the job failed ({reason}): the rehearsal ended before the job did",
                "rehearse again (vtrain's notes above say why it ended)",
            )
        ]
    run = runs[-1]
    if run.refused:
        return []  # the `args` check says it, with what to do
    said = last_words(run.tail)
    last = f"its last line {said!r}" if said else "it printed nothing"
    # The reason names the replica first (`restart_policy`); the finding names it already.
    what = reason.removeprefix(f"{run.name} ")
    return [
        Finding(
            "job",
            run.name,
            f"the job failed: {what}, {last}: it would fail on {where} too",
            "fix what its log shows, then rehearse again",
        )
    ]


def kill(ev: Evidence) -> list[Finding]:
    """Each --kill of the plan that was never sent."""
    fired = list(ev.fired)
    findings = []
    for text in ev.kills:
        if text in fired:
            fired.remove(text)
            continue
        planned = Kill.parse(text)
        what = "preemption" if planned.signal.name == "SIGTERM" else "lost machine"
        if ev.seconds < planned.seconds:
            ran = f"{ev.seconds:.1f}" if ev.seconds >= 1 else f"{ev.seconds:.2g}"
            why = f"the job ended after {ran} s"
            fix = (
                f"kill at an earlier time, within the job's {ran} s, or give the job more "
                "work so that it is still running then"
            )
        else:
            why = (
                f"at {planned.seconds:g} s {planned.replica_name} was not running, or the job "
                "was ending"
            )
            fix = "kill at a time when it runs, not while it restarts or the job ends"
        findings.append(
            Finding(
                "kill",
                planned.replica_name,
                f"--kill {text} never fired: {why}, so the {what} and the restart that "
                "follows were not rehearsed",
                fix,
            )
        )
    return findings

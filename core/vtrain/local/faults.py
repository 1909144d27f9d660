"""`--kill` and `--slow`: faults injected as the platform has them happen.

SIGKILL is a lost VM (a crash, a host failure). SIGTERM is a preemption (a spot
reclaim, a maintenance event): the VM is gone PREEMPTION_NOTICE seconds later,
whatever the replica does meanwhile, so its SIGTERM save has that long, not --grace.
SIGSTOP is a VM that hangs (a stuck GPU, a stalled host): it stays frozen, as no
platform restarts a machine that is still up; only its peers' watchdogs, and the
restart that follows, end it. `--slow` is a slow machine: stopped and continued in
a duty cycle (`vtrain.local.duty_cycle`), it runs a fraction of the time.
"""

from __future__ import annotations

import re
import signal
from signal import SIGKILL, Signals  # by name: Kill's field `signal` hides the module

from vtrain.cluster.fields import natural
from vtrain.cluster.roles import CHIEF, EVALUATOR, PS, WORKER
from vtrain.errors import UsageError
from vtrain.frozen import Frozen
from vtrain.local.option_checks import MAX_SECONDS, seconds_problem

LOCAL_ROLES = (CHIEF, WORKER, PS, EVALUATOR)

_KILL = re.compile(
    r"(?P<role>[a-z]+):(?P<index>[0-9]+)@(?P<seconds>[0-9.]+)(?::(?P<signal>[A-Za-z]+))?"
)


class Kill(Frozen):
    """A fault to inject: send `signal` to replica `role`-`index` `seconds` after the job starts."""

    __slots__ = ("role", "index", "seconds", "signal")
    role: str
    index: int
    seconds: float
    signal: Signals

    def __init__(self, role: str, index: int, seconds: float, signal: Signals = SIGKILL) -> None:
        self._init_from(locals())

    @classmethod
    def parse(cls, text: str) -> Kill:
        """Read ``ROLE:INDEX@SECONDS[:SIGNAL]``, e.g. ``worker:0@5``, ``ps:0@2.5:TERM`` or
        ``worker:0@12:STOP`` (a machine that hangs)."""
        match = _KILL.fullmatch(text)
        expected = "ROLE:INDEX@SECONDS[:SIGNAL], e.g. worker:0@5 or worker:0@5:TERM"
        if match is None:
            raise UsageError("not a kill", source="--kill", value=text, expected=expected)
        role = match["role"]
        if role not in LOCAL_ROLES:
            raise UsageError(
                "unknown role", source="--kill", value=text, expected=" or ".join(LOCAL_ROLES)
            )
        try:
            seconds = float(match["seconds"])
        except ValueError:
            raise UsageError(
                "the time is not a number", source="--kill", value=text, expected=expected
            ) from None
        if problem := seconds_problem(seconds, zero=True):
            raise UsageError(
                f"the time {problem}",
                source="--kill",
                value=text,
                expected=f"at most {MAX_SECONDS:.0f} seconds",
            )
        index = natural(match["index"])
        if index is None:
            raise UsageError(
                "the index is too large", source="--kill", value=text, expected=expected
            )
        name = (match["signal"] or "KILL").upper()
        name = name if name.startswith("SIG") else "SIG" + name
        try:
            sig = Signals[name]
        except KeyError:
            raise UsageError(
                "unknown signal",
                source="--kill",
                value=text,
                expected="KILL, TERM, STOP, INT or HUP",
            ) from None
        return cls(role=role, index=index, seconds=seconds, signal=sig)

    @property
    def replica_name(self) -> str:
        """The name of the replica this kill is aimed at."""
        return f"{self.role}-{self.index}"

    def __str__(self) -> str:
        return f"{self.role}:{self.index}@{self.seconds:g}:{self.signal.name[3:]}"


class Slow(Frozen):
    """A slow machine: replica `role`-`index` runs 1/`factor` of the time from `seconds` on."""

    __slots__ = ("role", "index", "seconds", "factor")
    role: str
    index: int
    seconds: float
    factor: float

    def __init__(self, role: str, index: int, seconds: float, factor: float) -> None:
        self._init_from(locals())

    @classmethod
    def parse(cls, text: str) -> Slow:
        """Read ``ROLE:INDEX@SECONDS:FACTOR``, e.g. ``worker:0@10:3`` (3 times slower from 10 s)."""
        expected = "ROLE:INDEX@SECONDS:FACTOR, e.g. worker:0@10:3 (3 times slower from 10 s on)"
        where, _, factor = text.rpartition(":")
        if not where or "@" not in where or ":" in where.partition("@")[2]:  # no :SIGNAL
            raise UsageError("not a slowdown", source="--slow", value=text, expected=expected)
        try:
            kill = Kill.parse(where)
        except UsageError as e:
            raise UsageError(e.problem, source="--slow", value=text, expected=expected) from None
        try:
            times = float(factor)
        except ValueError:
            times = float("nan")
        if not 1 < times <= MAX_FACTOR:
            raise UsageError(
                "the factor is not a slowdown",
                source="--slow",
                value=text,
                expected=f"a number above 1, at most {MAX_FACTOR:g} (3: a third of the speed)",
            )
        return cls(kill.role, kill.index, kill.seconds, times)

    @property
    def replica_name(self) -> str:
        """The name of the replica this slowdown is aimed at."""
        return f"{self.role}-{self.index}"

    def __str__(self) -> str:
        return f"{self.role}:{self.index}@{self.seconds:g}:{self.factor:g}"


MAX_FACTOR = 100.0
"""The slowest a --slow replica runs: a hundredth of the time is a frozen one, with extra steps."""

PREEMPTION_NOTICE = 30.0
"""Seconds between the SIGTERM and the SIGKILL of a preempted VM (Compute Engine's notice for
spot and preemptible VMs): how long an injected `--kill …:TERM` lets the replica save."""


def announce(kill: Kill) -> str:
    """What vtrain says as it injects `kill`: that the peers' failures that follow are expected."""
    if kill.signal == signal.SIGSTOP:
        return (
            f"--kill {kill}: freezing {kill.replica_name} (SIGSTOP), as a machine that hangs; it "
            "stays frozen, as no platform restarts a machine that is still up: its peers' "
            "watchdogs end them (exit 75), and the job's restart policy does the rest"
        )
    notice = (
        f" (a preemption notice: SIGKILL in {PREEMPTION_NOTICE:g} s unless it exits)"
        if kill.signal == signal.SIGTERM
        else ""
    )
    return (
        f"--kill {kill}: sending {kill.signal.name} to {kill.replica_name}{notice}; replicas "
        "that train with it are expected to fail too, and restart"
    )


def announce_slow(slow: Slow) -> str:
    """What vtrain says as a --slow replica's duty cycle begins."""
    return (
        f"--slow {slow}: {slow.replica_name} runs 1/{slow.factor:g} of the time from now on "
        "(stopped and continued in a duty cycle), as a slow machine; a straggler line names "
        "it where its peers step on their own, and the job slows where they meet every step"
    )


def sigkill_after(kill: Kill, grace: float) -> float | None:
    """Seconds from the injected signal to the SIGKILL that follows it (None: none follows:
    it is SIGKILL, or SIGSTOP, a machine that hangs until something restarts it)."""
    if kill.signal in (signal.SIGKILL, signal.SIGSTOP):
        return None
    return PREEMPTION_NOTICE if kill.signal == signal.SIGTERM else grace


def given(kill: Kill) -> str:
    """`kill` as a user writes it: ``worker:0@30``, ``worker:0@30:TERM`` (SIGKILL unsaid)."""
    text = f"{kill.role}:{kill.index}@{kill.seconds:g}"
    return text if kill.signal == signal.SIGKILL else f"{text}:{kill.signal.name[3:]}"

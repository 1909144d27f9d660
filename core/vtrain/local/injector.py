"""The job's faults as they happen, and its look at the trainers' progress, for the supervisor.

`--kill` sends its signal (and, after a SIGTERM, the SIGKILL that follows); a
`:STOP` leaves the replica frozen, as a machine that hangs. `--slow` runs a
replica's duty cycle (`vtrain.local.duty_cycle`). Once a second the trainers'
progress files are read for the straggler check (`vtrain.local.stragglers`).
"""

from __future__ import annotations

import os
import signal
import time

from vtrain.local import faults
from vtrain.local.deadlines import LOOK_EVERY
from vtrain.local.stragglers import Stragglers

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from vtrain.local.deadlines import Deadlines
    from vtrain.local.notes import Notes
    from vtrain.local.output import Output
    from vtrain.local.plan import Kill, Plan
    from vtrain.local.runs import Runs, Unrecorded
    from vtrain.local.serving import ServingFiles
    from vtrain.local.slots import Slot


class Injector:
    """Sends the job's faults, and looks at its trainers' progress."""

    def __init__(
        self,
        plan: Plan,
        slots: Mapping[str, Slot],
        deadlines: Deadlines,
        note: Notes,
        output: Output,
        serving: ServingFiles,
        environ: Mapping[str, str],
    ) -> None:
        self._plan = plan
        self._slots = slots
        self._deadlines = deadlines
        self._note = note
        self._out = output
        self._serving = serving
        self._stragglers = Stragglers(environ)
        self.runs: Runs | Unrecorded | None = None
        """Where a fired --kill goes on record."""

    def inject(self, kill: Kill, *, ending: bool) -> bool:
        """Send `kill`; False when there was nothing to send it to (`ending`: the job ends)."""
        slot = self._slots[kill.replica_name]
        if slot.proc is None or ending:
            why = "the job is stopping" if ending else f"{slot.name} is not running"
            self._note(f"--kill {kill}: {why}; nothing to kill")
            return False
        # Its peers' tracebacks follow (a collective lost a member): say first that they are
        # the rehearsal working, not a second failure.
        self._note(faults.announce(kill), slot.name)
        # A frozen machine stays up, as a hung VM does: none of its runs ended; its peers' do.
        slot.injected = kill.signal != signal.SIGSTOP
        slot.frozen = not slot.injected
        slot.proc.signal(kill.signal)
        if self.runs is not None:
            self.runs.fired(faults.given(kill))
        if (seconds := faults.sigkill_after(kill, self._plan.grace)) is not None:
            self._deadlines.sigkill[slot.name] = time.monotonic() + seconds
        return True

    def tick(self, now: float, *, running: bool) -> None:
        """The --slow duty cycles' signals (`running`: the job is not being stopped), and a
        look at the trainers' progress when one is due."""
        begun, signals = self._deadlines.duty.due(now, self._deadlines.t0)
        for slow in begun:
            self._note(faults.announce_slow(slow), slow.replica_name)
        for name, sig in signals if running else ():
            slot = self._slots[name]
            if slot.proc is not None and not slot.frozen:  # a hung machine stays hung
                slot.proc.signal(sig)
        if not self._deadlines.due("look", now):
            return
        self._deadlines.look = now + LOOK_EVERY
        files = {n: self._serving.progress(n) for n, s in self._slots.items() if s.proc}
        for name, line in self._stragglers.look(files, now):
            self._note(line, name)
            if (leader := self._leader()) != name:
                self._out.log_only(leader, f"vtrain: {line}".encode())

    def release(self) -> None:
        """The job ends (it stops, or the chief succeeded): a --slow replica stopped in its
        cycle continues, to exit by itself or take its SIGTERM."""
        for name in self._deadlines.duty.held():
            slot = self._slots[name]
            if slot.proc is not None and not slot.frozen:
                slot.proc.signal(signal.SIGCONT)

    def _leader(self) -> str:
        """The replica whose log gets the job's lines: the chief, else the first that trains."""
        names = [n for n in self._slots if os.path.exists(self._serving.progress(n))]
        return next(iter(names), next(iter(self._slots)))

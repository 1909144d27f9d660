"""SIGTERM on an MXNet worker: every worker stops after the same step, and one commit is made.

A preemption (spot reclaim, maintenance) sends SIGTERM and, 30 s later, SIGKILL.
Under dist_sync every step pushes and pulls every gradient, so a worker that
left alone would stall the others in their next push, and a worker leaving at
a save would hang the others at close()'s barrier. So the handle's trainer
catches SIGTERM as a flag (vtrain's `PreemptionHandler`, whose deadline still
exits 143 before SIGKILL if the loop never saves), and every CHECK_SECONDS or
so, after a `trainer.step`, the workers sum their flags through the kvstore (on
PREEMPT_KEY, as the stream iterator sums its records-left flags): every worker
learns after the same step that one of them got it. Not after every step: a sum
is one more round trip through the servers, as long as a small model's whole
step (0.80x the steps per second, bench/setup_mxnet.py). With their flags the
workers sum their seconds per step, and each sum, read by every worker at the
next check, sets the same number of steps to the check after it on every
worker. The next `save_checkpoint`
is then the last: the leader commits it, every worker meets at the kvstore's
barrier, and every process exits 143.

Under dist_async no such sum exists (the servers run the optimizer on every
key pushed, and no push waits for the others): SIGTERM is left to its default
there, and the job resumes from the last commit.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any, NoReturn

from vtrain.preemption import EXIT_STATUS, PreemptionHandler
from vtrain_mxnet.internals import states_are_local

PREEMPT_KEY = 199_997
"""The kvstore key the workers sum their SIGTERM flags on. No Trainer uses it (they number
parameters from 0), nor the stream iterator (199_998) nor vtrain_mxnet.rank_zero (199_999);
ps-lite picks a server with key * 9973 in a C int, so the key keeps that product below 2**31."""

STUCK_SECONDS = 3.0
"""A worker whose main thread has not come back from MXNet for this long after SIGTERM is
waiting in a push or pull that a gone peer will never answer (the servers wait for every
worker): it exits 143 at once, saving nothing, instead of waiting for SIGKILL (30 s on the
platforms, 5 s under `vtrain local run`) before the job can restart. A step's own wait
is far shorter; one longer than this loses its preemption save, as without the flag."""

CHECK_SECONDS = 0.25
"""About how often the workers sum their flags: a SIGTERM is known everywhere within
twice this (a sum is read at the check after it), far inside the 30 s before SIGKILL."""

MAX_STEPS_PER_CHECK = 10_000
"""The most steps between two sums, whatever the steps' measured time."""

FOLLOW_SECONDS = 2.0
"""How long a worker that does not lead waits, after the commit, before it exits: the
leader's exit, with its `committed step N` line, is then the one the platform sees first."""


def steps_per_check(seconds_per_step: float) -> int:
    """Steps to the next sum of the flags, for steps of this many seconds (the workers' mean)."""
    if not seconds_per_step > 0:  # NaN too: the first check, or a clock that did not move
        return 1
    # The ratio before int(): a step of a few nanoseconds would make it infinite.
    return max(1, int(min(MAX_STEPS_PER_CHECK, CHECK_SECONDS / seconds_per_step)))


class AgreedSigterm:
    """The SIGTERM flag of one worker, and whether any worker of the kvstore got one.

    `kvstore` None (alone, or a kvstore of one worker): this worker's own flag decides.
    """

    def __init__(self, kvstore: Any, world_size: int) -> None:
        self._kvstore = kvstore if world_size > 1 else None
        self._world_size = world_size
        self._keyed = False
        self._total: Any = None
        """The last check's sum, [flags, seconds per step], pulled and not yet read."""
        self._interval = 1  # steps from the last check to the next: the first step checks
        self._countdown = 1  # of those, the steps left
        self._checked_at = time.monotonic()
        self.agreed = False
        """True on every worker after the same step once any of them got SIGTERM."""
        self._handler: PreemptionHandler | None = None
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        ):  # a script with its own SIGTERM handler keeps it
            self._handler = PreemptionHandler(stuck_after=STUCK_SECONDS).install()

    @property
    def requested(self) -> bool:
        """True once this process got SIGTERM."""
        return self._handler is not None and self._handler.requested

    def agree(self, trainer: Any) -> bool:
        """After a step of `trainer`: did any worker get SIGTERM? A collective under dist_sync.

        Every worker calls it after each of its steps (the handle's trainer does), so
        the checks fall on the same steps everywhere, and the pushes of PREEMPT_KEY pair
        up as the gradients' do.
        """
        if self.agreed:
            return True
        kvstore = self._kvstore
        if kvstore is None:
            self.agreed = self.requested
            return self.agreed
        self._countdown -= 1  # the only work of most steps
        if self._countdown > 0:
            return False
        import mxnet as mx

        if not self._keyed:
            if not states_are_local(trainer):
                # update_on_kvstore=True: the servers would run the optimizer on the flags
                # too, and their sum would mean nothing. SIGTERM keeps its default.
                self._kvstore = None
                self.release()
                return False
            kvstore.init(PREEMPT_KEY, mx.nd.zeros((2,)))  # waits for every worker: once
            self._keyed = True
        steps, self._interval = self._interval, 1
        if self._total is not None:
            # Read before the next push: MXNet does not order two pushes of one key (see
            # vtrain_mxnet.data.workers_with_records). Every worker reads the same sum
            # here, so all of them agree after the same step and count the same steps.
            flags, seconds = (float(x) for x in self._total.asnumpy())
            self._total = None
            if flags > 0:
                self.agreed = True
                return True  # no worker pushes again: none waits for a missing flag
            self._interval = steps_per_check(seconds / self._world_size)
        self._countdown = self._interval
        now = time.monotonic()
        per_step, self._checked_at = (now - self._checked_at) / steps, now
        # Fresh arrays at each check; the sum is read at the next one, long arrived by then.
        mine = mx.nd.array([1.0 if self.requested else 0.0, per_step])
        self._total = mx.nd.zeros((2,))
        kvstore.push(PREEMPT_KEY, mine)
        kvstore.pull(PREEMPT_KEY, out=self._total)
        return False

    def exit(self, is_leader: bool) -> NoReturn:
        """Leave with status 143, the leader first; call it once the commit is done everywhere."""
        if not is_leader:
            time.sleep(FOLLOW_SECONDS)
        if self._handler is not None and self._handler.requested:
            self._handler.exit()  # settles a pending background save within the grace
        self.release()
        # Another worker was preempted: leave with it, as the restart resumes from this step.
        raise SystemExit(EXIT_STATUS)

    def release(self) -> None:
        """SIGTERM ends the process at once again (no save is coming), unless it came."""
        if self._handler is not None and not self._handler.requested:
            self._handler.uninstall()
            self._handler = None

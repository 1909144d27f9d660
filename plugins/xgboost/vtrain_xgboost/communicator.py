"""Entering XGBoost's collective, patiently, and leaving it: the life of one trainer's link.

A worker first learns where the tracker listens: the chief's port from the
cluster is a doorway that answers with the tracker's own port (see `tracker`).
That read is the probe: it waits for the chief's host name to resolve, connects,
and reads one line with a timeout, so nothing but vtrain's chief satisfies it.
(A bare TCP probe would take another program on the port for the chief, and
XGBoost's own connect would then wait on it without end.) Then XGBoost itself
connects, one attempt per try, and the core's `wait_for` pauses between tries
for as long as `wait` allows. A refused attempt costs milliseconds, so the
pauses start short (50 ms, growing by a quarter up to 2 s): at launch a worker is
often a moment ahead of the chief, and its wait should end within a moment of the
tracker's start. XGBoost's own retries sleep 2 s, then 4 s…, which would add
seconds to every such launch.

Once connected, XGBoost's init waits in C code for the whole world to arrive,
with no timeout but the one for every later operation (an hour): it runs under
the core's `watchdog`, so `wait` bounds the entry as a whole (plus the core's
WATCHDOG_GRACE, within which the tracker's own timeout, at the same deadline,
gives every trainer its better reason first).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from datetime import timedelta

from vtrain import LaunchError
from vtrain.plugins.wait import (
    WATCHDOG_GRACE,
    Backoff,
    Probe,
    name_probe,
    reply_probe,
    wait_for,
    watchdog,
)
from vtrain_xgboost.rendezvous import Rendezvous
from vtrain_xgboost.tracker import Tracker, start_tracker, stop_tracker, tracker_port

JOIN_BACKOFF = Backoff(first=0.05, most=2.0, factor=1.25)
# One connection attempt per init: the pauses between attempts are the wait's (see above).
_ATTEMPT_RETRY = 1
# What XGBoost 3 says when nothing listens at the tracker's address.
_UNREACHABLE = "connect to the tracker"
_DOORWAY_LINE = 64  # bytes: the doorway's line is shorter


class Link:
    """One trainer's membership in the collective, and on rank 0 the tracker it hosts."""

    def __init__(self, rv: Rendezvous, *, wait: timedelta, timeout: timedelta) -> None:
        self.rv = rv
        self.wait = wait
        self.timeout = timeout
        self.tracker: Tracker | None = None
        self.joined = False
        self._deadline = 0.0  # monotonic time by which the entry must be done
        self.waited = 0.0
        """Seconds spent waiting for the tracker and the other trainers."""

    def open(self) -> None:
        """Host the tracker on rank 0, then enter the collective; raise LaunchError on failure."""
        start = time.monotonic()
        self._deadline = start + self.wait.total_seconds()
        if self.rv.hosts_tracker:
            self.tracker = start_tracker(self.rv, self.wait)
        try:
            # One `wait` for the whole entry: what the tracker's start took is not waited again.
            self._join(self.wait - timedelta(seconds=time.monotonic() - start))
        except BaseException:
            self.close(failed=True)
            raise
        self.joined = True
        self.waited = time.monotonic() - start

    def close(self, *, failed: bool = False) -> None:
        """Leave the collective; on rank 0, wait for the others to leave, then stop the tracker.

        After a failure the tracker is stopped at once: the others may never sign off.
        """
        from xgboost import collective
        from xgboost.core import XGBoostError

        if self.joined:
            self.joined = False
            try:
                collective.finalize()
            except XGBoostError:
                if not failed:
                    raise
        if self.tracker is not None:
            tracker, self.tracker = self.tracker, None
            stop_tracker(tracker, finish_seconds=None if failed else self.wait.total_seconds())

    def _join(self, left: timedelta) -> None:
        rv = self.rv
        assert rv.tracker_host is not None and rv.tracker_address is not None
        wait_for(
            self._connect_probe(),
            what="XGBoost's tracker",
            address=rv.tracker_address,
            source=rv.address_source,
            deadline=left,
            backoff=JOIN_BACKOFF,
            hint="the chief hosts it and may still be starting: raise `wait=` in configure(), "
            "or check that the chief runs and that its port is open",
        )

    def _connect_probe(self) -> Probe:
        """One try: the tracker's name resolves, its doorway names its port, XGBoost gets in."""
        from xgboost import collective
        from xgboost.core import XGBoostError

        rv = self.rv
        assert rv.tracker_host is not None and rv.tracker_port is not None
        resolves = name_probe(rv.tracker_host)
        learned: list[int] = []

        def judge(line: bytes) -> str | None:
            port = tracker_port(line)
            if port is None and not line:
                return "something listens there but closed the connection without a word"
            if port is None:
                return f"something else answers there ({line[:40]!r}), not vtrain's XGBoost chief"
            learned[:] = [port]
            return None

        doorway = reply_probe(
            rv.tracker_host, rv.tracker_port, judge, size=_DOORWAY_LINE, timeout=1.0
        )
        args = collective.CommunicatorContext(
            dmlc_tracker_uri=rv.tracker_host,
            dmlc_tracker_port=rv.tracker_port,
            dmlc_task_id=rv.task_id,
            dmlc_timeout=max(1, round(self.timeout.total_seconds())),
            dmlc_retry=_ATTEMPT_RETRY,
        ).args  # it adds the NCCL library's path where XGBoost loads NCCL at run time
        resolved = False

        def probe() -> str | None:
            nonlocal resolved
            if not resolved:
                problem = resolves()
                if problem is not None:
                    return problem
                resolved = True
            if self.tracker is not None:  # rank 0 hosts it: no need to ask the doorway
                learned[:] = [self.tracker.port]
            else:
                problem = doorway()
                if problem is not None:
                    return problem
            port = learned[0]
            left = self._deadline - time.monotonic()
            try:
                bound = max(left, 1.0) + WATCHDOG_GRACE
                with warnings.catch_warnings(), watchdog(bound, self._blocked(port)):
                    # Each refused attempt is a warning from XGBoost; the wait is expected.
                    warnings.filterwarnings("ignore", r"(?s).*(Failed to connect|Retrying)")
                    collective.init(**{**args, "dmlc_tracker_port": port})
                return None
            except XGBoostError as e:
                text = str(e)
                if not _unreachable(text, port):
                    raise self._did_not_form(text) from None
                return "nothing listens there yet"

        return probe

    def _blocked(self, port: int) -> Callable[[float], LaunchError]:
        """The error that ends a trainer still inside XGBoost's init at the deadline."""
        rv = self.rv

        def error(_: float) -> LaunchError:
            waited = time.monotonic() - (self._deadline - self.wait.total_seconds())
            return LaunchError(
                f"XGBoost's collective did not form within {self.wait.total_seconds():g} s "
                f"(entered at the tracker {rv.tracker_host}:{port}, still waiting for the "
                f"others after {waited:.0f} s)",
                source=rv.world_source,
                value=rv.world_size,
                expected=f"{rv.world_size} trainers (the chief and the workers) reaching the "
                f"tracker behind {rv.tracker_address}",
                hint="a world size larger than the replicas that run? a trainer that crashed or "
                "started too late? raise `wait=` in configure() for slow starts",
            )

        return error

    def _did_not_form(self, text: str) -> LaunchError:
        rv = self.rv
        reason = _reason(text)
        if self.tracker is not None:
            try:
                self.tracker.rabit.wait_for(1)
            except Exception as e:  # noqa: BLE001 - XGBoostError: the tracker's own reason
                reason = f"{reason}; the tracker: {_reason(str(e))}"
        return LaunchError(
            f"XGBoost's collective did not form within {self.wait.total_seconds():g} s ({reason})",
            source=rv.world_source,
            value=rv.world_size,
            expected=f"{rv.world_size} trainers (the chief and the workers) reaching the "
            f"tracker at {rv.tracker_address}",
            hint="a world size larger than the replicas that run? a trainer that crashed or "
            "started too late? raise `wait=` in configure() for slow starts",
        )


def _unreachable(text: str, port: int) -> bool:
    """True when an init failed because nothing listens at the tracker's address yet."""
    # 2.x names the address it could not reach, not the tracker; peers' ports differ from it.
    return _UNREACHABLE in text or ("Failed to connect to" in text and f":{port}" in text)


def _reason(text: str) -> str:
    """The most specific lines of an XGBoost error, without its stack trace."""
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Stack trace"):
            break
        if line.startswith("- ["):
            lines.append(line.split("]: ", 1)[-1])
    return "; ".join(lines[-2:]) if lines else text.splitlines()[0] if text else "no reason"

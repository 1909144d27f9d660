"""Entering XGBoost's collective, patiently, and leaving it: the life of one trainer's link.

Why not the core's TCP probe (`tcp_probe`): it proves the chief is up by opening
a connection and closing it unsaid. XGBoost's tracker takes every connection for
a worker: 3.x logs "Failed to initialize worker proxy … Connection reset by
peer" on the chief for each such probe, and 2.x's tracker stops there and then.
So the probe here never connects on its own: it waits for the tracker's host
name to resolve, then lets XGBoost itself connect, one attempt per try, and the
core's `wait_for` pauses between tries for as long as `wait` allows. A refused
attempt costs milliseconds, so the pauses start short (50 ms, growing by a
quarter up to 2 s): at launch a worker is often a moment ahead of the chief, and
its wait should end within a moment of the tracker's start. XGBoost's own
retries sleep 2 s, then 4 s…, which would add seconds to every such launch.
"""

from __future__ import annotations

import time
import warnings
from datetime import timedelta
from typing import Any

from vtrain import LaunchError
from vtrain.plugins.wait import Backoff, Probe, name_probe, wait_for
from vtrain_xgboost.rendezvous import Rendezvous
from vtrain_xgboost.tracker import start_tracker, stop_tracker

JOIN_BACKOFF = Backoff(first=0.05, most=2.0, factor=1.25)
# One connection attempt per init: the pauses between attempts are the wait's (see above).
_ATTEMPT_RETRY = 1
# What XGBoost 3 says when nothing listens at the tracker's address.
_UNREACHABLE = "connect to the tracker"


class Link:
    """One trainer's membership in the collective, and on rank 0 the tracker it hosts."""

    def __init__(self, rv: Rendezvous, *, wait: timedelta, timeout: timedelta) -> None:
        self.rv = rv
        self.wait = wait
        self.timeout = timeout
        self.tracker: Any = None
        self.joined = False
        self.waited = 0.0
        """Seconds spent waiting for the tracker and the other trainers."""

    def open(self) -> None:
        """Host the tracker on rank 0, then enter the collective; raise LaunchError on failure."""
        start = time.monotonic()
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
        """One try: the tracker's name resolves, then XGBoost's own connect gets in."""
        from xgboost import collective
        from xgboost.core import XGBoostError

        rv = self.rv
        assert rv.tracker_host is not None
        resolves = name_probe(rv.tracker_host)
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
            try:
                with warnings.catch_warnings():
                    # Each refused attempt is a warning from XGBoost; the wait is expected.
                    warnings.filterwarnings("ignore", r"(?s).*(Failed to connect|Retrying)")
                    collective.init(**args)
                return None
            except XGBoostError as e:
                text = str(e)
                if not _unreachable(text, rv):
                    raise self._did_not_form(text) from None
                return "nothing listens there yet"

        return probe

    def _did_not_form(self, text: str) -> LaunchError:
        rv = self.rv
        reason = _reason(text)
        if self.tracker is not None:
            try:
                self.tracker.wait_for(1)
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


def _unreachable(text: str, rv: Rendezvous) -> bool:
    """True when an init failed because nothing listens at the tracker's address yet."""
    # 2.x names the address it could not reach, not the tracker; peers' ports differ from it.
    return _UNREACHABLE in text or (
        "Failed to connect to" in text and f":{rv.tracker_port}" in text
    )


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

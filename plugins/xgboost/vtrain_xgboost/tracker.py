"""XGBoost's tracker, hosted in the chief's process on the chief's port from the cluster.

It ranks workers by task id (`sortby="task"`), so tracker rank is vtrain rank.
Its timeout is the job's `wait`: it bounds how long the tracker waits for every
trainer to arrive, so a world size larger than the replicas that exist ends in
an error instead of a hang. XGBoost binds the port without SO_REUSEADDR: a chief
restarted within a minute finds it held by the previous run's closed
connections (TIME_WAIT), and retries, through the core's `wait_for`, as long.
"""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any

from vtrain import LaunchError
from vtrain.plugins.wait import Backoff, wait_for
from vtrain_xgboost.rendezvous import Rendezvous

_IN_USE = "Address already in use"


def start_tracker(rv: Rendezvous, wait: timedelta) -> Any:
    """A started `xgboost.tracker.RabitTracker` for `rv`'s world; retries a port still in use."""
    from xgboost.core import XGBoostError
    from xgboost.tracker import RabitTracker

    where = f"{rv.bind_host}:{rv.tracker_port}"
    hint = "the chief's port from the cluster is the tracker's; another program may hold it"
    started: list[Any] = []

    def listen() -> str | None:
        try:
            tracker = RabitTracker(
                n_workers=rv.world_size,
                host_ip=rv.bind_host,
                port=rv.tracker_port or 0,
                sortby="task",
                timeout=max(1, round(wait.total_seconds())),
            )
        except XGBoostError as e:
            if _IN_USE in str(e):
                return _first_line(e, _IN_USE)
            raise LaunchError(
                f"XGBoost's tracker cannot listen on {where}: " + _first_line(e, _IN_USE),
                source=rv.address_source,
                value=rv.tracker_address,
                expected="a port of the chief's that nothing else uses",
                hint=hint,
            ) from None
        started.append(tracker)
        return None

    wait_for(
        listen,
        what="XGBoost's tracker's port",
        address=where,
        source=rv.address_source,
        deadline=wait,
        backoff=Backoff(first=0.1, most=2.0),
        failed="did not come free",
        hint=hint,
    )
    tracker = started[0]
    tracker.start()
    return tracker


def stop_tracker(tracker: Any, *, finish_seconds: float | None) -> None:
    """Wait up to `finish_seconds` for every worker to sign off (None: not at all), then free it."""
    from xgboost.core import XGBoostError

    try:
        if finish_seconds is not None:
            tracker.wait_for(max(1, round(finish_seconds)))
    except XGBoostError:
        pass  # a worker that died never signs off: the job's own failure says why
    finally:
        # Freeing a running tracker interrupts its accept, and it raises to say so.
        with contextlib.suppress(XGBoostError):
            tracker.free()


def _first_line(e: BaseException, wanted: str) -> str:
    for line in str(e).splitlines():
        if wanted in line:
            return line.strip(" -")
    lines = [ln.strip(" -") for ln in str(e).splitlines() if ln.strip(" -")]
    return lines[-1] if lines else type(e).__name__

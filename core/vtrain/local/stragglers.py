"""Stragglers: a trainer whose step rate stays below a fraction of its peers' median.

`vtrain local run` reads every trainer's progress file once a second
(`vtrain.progress.file`). A trainer below FRACTION of the median of the others'
rates for AFTER seconds gets one line, in its own log and on the leader's; it is
never stopped for that alone. Said once, it is said again only after it caught up.

A job whose trainers meet every step (DDP, MultiWorkerMirrored, XGBoost, MXNet's
dist_sync) steps at its slowest trainer's pace on every trainer: there the rates
are equal, and a straggler shows as the whole job's rate falling, in the live view,
not as one trainer's line. The check names the trainer that falls behind where
trainers step on their own (asynchronous updates, a parameter-server job).
"""

from __future__ import annotations

import os

from vtrain.errors import ConfigError
from vtrain.progress.file import read

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

FRACTION = "VTRAIN_STRAGGLER_FRACTION"
"""A trainer below this fraction of its peers' median rate falls behind (default 0.5)."""
AFTER = "VTRAIN_STRAGGLER_SECONDS"
"""Seconds it must stay below before its line (default 10)."""
DEFAULT_FRACTION = 0.5
DEFAULT_AFTER = 10.0


def behind(rates: Mapping[str, float], fraction: float) -> dict[str, float]:
    """The trainers whose rate is below `fraction` of the median of the others' -> that median.

    Fewer than two trainers with a rate: nobody is behind anyone.
    """
    found = {}
    for name, rate in rates.items():
        others = sorted(r for n, r in rates.items() if n != name)
        if not others:
            continue
        middle = len(others) // 2
        median = others[middle] if len(others) % 2 else (others[middle - 1] + others[middle]) / 2
        if median > 0 and rate < fraction * median:
            found[name] = median
    return found


def settings(environ: Mapping[str, str]) -> tuple[float, float]:
    """(fraction, seconds) as `environ` sets them."""
    values = []
    for name, default, expected in (
        (FRACTION, DEFAULT_FRACTION, "a fraction between 0 and 1"),
        (AFTER, DEFAULT_AFTER, "seconds > 0"),
    ):
        text = environ.get(name, "").strip()
        try:
            value = float(text) if text else default
        except ValueError:
            value = float("nan")
        ok = 0 < value < 1 if name == FRACTION else 0 < value < float("inf")
        if not ok:
            raise ConfigError("out of range", source=name, value=environ[name], expected=expected)
        values.append(value)
    return values[0], values[1]


class Stragglers:
    """The job's straggler check: which trainer has stayed behind, and since when."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self.fraction, self.after = settings(os.environ if environ is None else environ)
        self._since: dict[str, float] = {}
        self._said: set[str] = set()

    def look(self, files: Mapping[str, str], now: float) -> list[tuple[str, str]]:
        """Read the trainers' progress `files` (replica -> path); the lines to say now, as
        (the straggler, its line)."""
        rates = {}
        for name, path in files.items():
            snapshot = read(path)
            if snapshot is not None and snapshot.rate is not None and snapshot.state != "done":
                rates[name] = snapshot.rate
        slow = behind(rates, self.fraction)
        for name in list(self._since):
            if name not in slow:
                del self._since[name]
                self._said.discard(name)
        lines = []
        for name, median in slow.items():
            since = self._since.setdefault(name, now)
            if name not in self._said and now - since >= self.after:
                self._said.add(name)
                lines.append(
                    (
                        name,
                        f"{name} is a straggler: {rates[name]:.2f} steps/s for "
                        f"{now - since:.0f} s, "
                        f"against its peers' median of {median:.2f} (below "
                        f"{self.fraction:g} of it); it keeps running",
                    )
                )
        return lines

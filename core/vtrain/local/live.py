"""The live view of `vtrain local run`: one row per replica, redrawn in place on a terminal.

Each trainer rewrites its progress file (`vtrain.progress.file`) about once a second;
vtrain adds what only it knows: a replica that serves, restarts, is stopped, frozen
(SIGSTOP) or has ended. `state` decides a row's state from those facts (pure, a table
test covers it), `render` draws the rows as screen lines (pure), and `Block` keeps them
at the bottom of the terminal: the replicas' lines and vtrain's notes scroll above it,
and each write erases it first and draws it again after (`vtrain.local.output`). The
job's end erases it, and the summary follows on a clean screen.

Elsewhere (a pipe, CI, `--plain`) the prefixed lines stay as they are, and every
`--progress-every` seconds vtrain says where each reporting trainer stands (`plain`).
"""

from __future__ import annotations

import time

from vtrain.cluster.roles import CHIEF, WORKER
from vtrain.frozen import Frozen
from vtrain.progress.file import DONE, LONG, STARTING, STUCK, WAITING, Snapshot, read

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from vtrain.local.serving import ServingFiles
    from vtrain.local.slots import Slot

LIVE_EVERY = 0.5
"""Seconds between two redraws of the live view: twice for each write of a trainer's file."""
DEFAULT_PROGRESS_EVERY = 30.0
"""Seconds between two progress lines per trainer where there is no live view."""
_HEADER = ("replica", "step", "steps/s", "commit", "idle", "state")
STARTING_SECONDS = 30.0
"""A trainer's run that has written no progress for this long is "running": it may never
(a script that does not configure vtrain)."""
_FRESH = 2.5
"""Seconds within which a progress file counts as fresh: its trainer's watchdog still writes."""
_SPARE_LINES = 3
"""Terminal lines the view leaves to the scrolling lines above it, at least."""


class Display(Frozen):
    """How a job shows itself: `live` (on a terminal), `verbose` (framework noise too) and the
    period of the progress lines without a live view."""

    __slots__ = ("live", "verbose", "progress_every")
    live: bool
    verbose: bool
    progress_every: float

    def __init__(
        self,
        live: bool = True,
        verbose: bool = False,
        progress_every: float = DEFAULT_PROGRESS_EVERY,
    ) -> None:
        self._init_from(locals())

    @classmethod
    def from_options(
        cls, *, plain: bool = False, verbose: bool = False, progress_every: float | None = None
    ) -> Display:
        """The display `--plain`, `--verbose` and `--progress-every` ask for, checked."""
        from vtrain.errors import UsageError
        from vtrain.local.option_checks import MAX_SECONDS, seconds_problem

        every = DEFAULT_PROGRESS_EVERY if progress_every is None else progress_every
        if problem := seconds_problem(every, zero=False):
            raise UsageError(
                problem,
                source="--progress-every",
                value=progress_every,
                expected=f"seconds > 0, at most {MAX_SECONDS:.0f}",
            )
        return cls(live=not plain, verbose=verbose, progress_every=every)


class Row(Frozen):
    """One replica's line in the view."""

    __slots__ = ("name", "state", "step", "rate", "commit", "idle", "reports")
    name: str
    state: str
    step: int | None
    rate: float | None
    commit: int | None
    idle: float | None
    """Seconds since its last progress; None before the first."""
    reports: bool
    """True when a trainer of its current run reports its progress (and it runs)."""

    def __init__(
        self,
        name: str,
        state: str,
        step: int | None = None,
        rate: float | None = None,
        commit: int | None = None,
        idle: float | None = None,
        reports: bool = False,
    ) -> None:
        self._init_from(locals())


def state(
    snapshot: Snapshot | None,
    *,
    running: bool,
    exit_code: int | None = None,
    restarts: int = 0,
    stopping: bool = False,
    after_success: bool = False,
    serves: bool = False,
    frozen: bool = False,
    trains: bool = True,
    age: float = 0.0,
) -> str:
    """A replica's state, as its row says it: what vtrain knows first, then what it reports.
    `trains`: its role reports progress (the chief and the workers); `age`: its run's seconds."""
    if not running:
        if exit_code is None:
            return "restarting" if restarts else "starting"
        if exit_code == 0 or after_success:
            return "done"
        return f"stopped ({exit_code})" if stopping else f"exited {exit_code}"
    if frozen:
        return "frozen (SIGSTOP)"
    if stopping:
        return "stopping"
    if serves:
        return "serving"
    said = None if snapshot is None else snapshot.state
    doing = None if snapshot is None else snapshot.doing
    if said is None and (not trains or age >= STARTING_SECONDS):
        return "running"
    if said is None or said == STARTING:
        return "restarting" if restarts else "starting"
    if said == WAITING:
        return f"waiting for {doing}" if doing else "waiting"
    if said == LONG:
        return f"busy: {doing}" if doing else "busy (a long step)"
    if said == STUCK:
        return f"stuck: {doing}" if doing else "stuck"
    if said == DONE:
        return "done"
    return said  # training, or a state this vtrain does not know yet


def rows(slots: Iterable[Slot], serving: ServingFiles, now: float) -> list[Row]:
    """Each replica's row at `now` (Unix seconds): its progress file and what vtrain knows."""
    found = []
    for slot in slots:
        proc = slot.proc
        snapshot = None if proc is None else read(serving.progress(slot.name))
        serves = proc is not None and serving.serves(slot.name)
        said = state(
            snapshot,
            running=proc is not None,
            exit_code=slot.exit_code,
            restarts=slot.restarts,
            stopping=slot.stopped,
            after_success=slot.after_success,
            serves=serves,
            frozen=proc is not None and slot.frozen,  # --kill …:STOP's, not --slow's stops
            trains=slot.replica.role in (CHIEF, WORKER),
            age=0.0 if slot.started is None else time.monotonic() - slot.started,
        )
        if snapshot is None:
            found.append(Row(slot.name, said))
            continue
        found.append(
            Row(
                slot.name,
                said,
                step=snapshot.step if snapshot.step is not None else snapshot.marks or None,
                rate=snapshot.rate,
                commit=snapshot.commit,
                idle=idle(snapshot, now),
                reports=not serves,
            )
        )
    return found


def idle(snapshot: Snapshot, now: float) -> float | None:
    """Seconds since the trainer's last progress, at `now` (Unix seconds). A fresh file is
    read as of its writing, up to a second ago; one no longer written (a frozen trainer) ages."""
    if snapshot.last is None:
        return None
    since = snapshot.t if now - snapshot.t <= _FRESH else now
    return max(0.0, since - snapshot.last)


def _cells(row: Row) -> tuple[str, ...]:
    return (
        row.name,
        "-" if row.step is None else str(row.step),
        "-" if row.rate is None else f"{row.rate:.1f}",
        "-" if row.commit is None else str(row.commit),
        "-" if row.idle is None else _seconds(row.idle),
        row.state,
    )


def _seconds(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"


def render(found: Sequence[Row], width: int, height: int) -> list[str]:
    """The view's screen lines for rows `found` on a terminal of `width` x `height`: a rule, a
    header and a row per replica (as many as fit), each cut to the width."""
    room = max(1, height - _SPARE_LINES - 2)
    shown = list(found) if len(found) <= room else list(found[: max(room - 1, 0)])
    table = [_HEADER, *map(_cells, shown)]
    widths = [max(len(cells[i]) for cells in table) for i in range(len(_HEADER) - 1)]
    lines = []
    for cells in table:
        left = f"{cells[0]:<{widths[0]}}"
        numbers = "  ".join(f"{c:>{w}}" for c, w in zip(cells[1:-1], widths[1:], strict=True))
        lines.append(f"{left}  {numbers}  {cells[-1]}")
    if len(shown) < len(found):
        lines.append(f"... and {len(found) - len(shown)} more replicas")
    cut = max(1, width - 1)  # the last column would wrap on some terminals
    rule = "-" * min(cut, max(map(len, lines)))
    return [line[:cut] for line in (rule, *lines)]


def plain(found: Iterable[Row]) -> list[str]:
    """The progress lines without a live view: one per running trainer that reports."""
    lines = []
    for row in found:
        if not row.reports:
            continue
        parts = [row.state]
        if row.step is not None:
            parts.append(f"step {row.step}")
        if row.rate is not None:
            parts.append(f"{row.rate:.1f} steps/s")
        if row.commit is not None:
            parts.append(f"last commit {row.commit}")
        if row.idle is not None:
            parts.append(f"last progress {_seconds(row.idle)} ago")
        lines.append(f"{row.name}: {', '.join(parts)}")
    return lines


class Block:
    """The view's lines at the bottom of a terminal: ANSI cursor moves that erase and draw them.

    The cursor stays at the end of the block's last line; erasing goes back to the
    start of its first line, where the next text is written, and clears what is below.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._drawn = 0

    @property
    def drawn(self) -> bool:
        """True while the block is on the screen."""
        return self._drawn > 0

    def erase(self) -> str:
        """What takes the block off the screen (nothing when it is not there)."""
        if not self._drawn:
            return ""
        up = f"\033[{self._drawn - 1}A" if self._drawn > 1 else ""
        self._drawn = 0
        return f"\r{up}\033[J"

    def draw(self) -> str:
        """What puts the block's lines on the screen, below the cursor's line start."""
        if self._drawn or not self.lines:
            return ""
        self._drawn = len(self.lines)
        return "\n".join(self.lines)

"""The report's timeline: a lane per replica and attempt, its phases as bars, its events as marks.

Each process's lane shows its start-up, its wait for the first step, its training
and what followed; marks show its commits, resume and preemption; the launcher's
records add each --kill (a red cross) and each restart (a purple triangle). Every
shape has its class, data-* attributes and a tooltip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from vtrain.report.gather import JobData
from vtrain.report.svg import Scale, element, svg, ticks, title
from vtrain.timeline.events import (
    COMMIT,
    FIRST_STEP,
    KILL,
    LAUNCH,
    PREEMPT_COMMIT,
    READY,
    RESUME,
    SIGTERM,
    START,
    STEP,
)
from vtrain.timeline.goodput import step_time

WIDTH, LANE, LEFT, TOP = 1000.0, 26.0, 130.0, 24.0
"""The drawings' width, a lane's height, the labels' column, the time axis' height."""


def timeline_svg(data: JobData) -> str:
    timeline = data.timeline
    every = [r["t"] for rs in (*timeline.lanes.values(), timeline.launcher) for r in rs]
    begin, end = min(every), max(every)
    x = Scale(0.0, max(end - begin, 1e-3), LEFT, WIDTH - 10)
    shapes, rows = [], list(timeline.lanes)
    height = TOP + LANE * len(rows) + 10
    for t in ticks(Scale(0.0, end - begin, 0, 1)):
        shapes.append(element("line", x1=x(t), x2=x(t), y1=TOP - 6, y2=height, stroke="#eaeef2"))
        shapes.append(element("text", f"{t:g} s", x=x(t) + 2, y=TOP - 10))
    per_step = {
        r: step_time([rs for (n, _), rs in timeline.lanes.items() if n == r]) for r, _ in rows
    }
    for row, (replica, attempt) in enumerate(rows):
        records = timeline.lanes[(replica, attempt)]
        y = TOP + row * LANE
        shapes.append(_lane(replica, attempt, records, y, x, begin, per_step[replica]))
    for record in timeline.launcher:  # what only the launcher saw: kills, restarts
        found = _row(rows, timeline.lanes, record)
        if found is None:
            continue
        row = found
        at, y = x(record["t"] - begin), TOP + row * LANE
        if record["e"] == KILL:
            shapes.append(_kill(record, at, y, record["t"] - begin))
        elif record["e"] == LAUNCH and record.get("attempt", 1) > 1:
            shapes.append(_restart(record, at, y))
    legend = [
        element("rect", x=LEFT + i * 110, y=height + 6, width=10, height=10, fill=colour)
        + element("text", name, x=LEFT + i * 110 + 14, y=height + 15)
        for i, (name, colour) in enumerate(
            [
                ("start-up", "#9aa5b1"),
                ("waiting", "#e3b341"),
                ("training", "#2e9d5b"),
                ("after", "#d9dde2"),
                ("| commit", "#ffffff"),
                ("x kill", "#ffffff"),
                ("> restart", "#ffffff"),
                ("o resume", "#ffffff"),
            ]
        )
    ]
    return svg(WIDTH, height + 24, [*shapes, *legend], id="timeline")


def _started(records: Sequence[Mapping[str, Any]]) -> float:
    return min((r["t"] for r in records), default=0.0)


def _row(
    rows: Sequence[tuple[str, int]],
    lanes: Mapping[tuple[str, int], Sequence[Mapping[str, Any]]],
    record: Mapping[str, Any],
) -> int | None:
    """The lane a launcher's record of a replica goes on: its attempt's (a launch), else the
    attempt that ran then (a kill); None for a replica that has no lane."""
    mine = [i for i, (replica, _) in enumerate(rows) if replica == record.get("replica")]
    if not mine:
        return None
    if record["e"] == LAUNCH:
        return next((i for i in mine if rows[i][1] == record.get("attempt")), mine[-1])
    running = [i for i in mine if _started(lanes[rows[i]]) <= record["t"]]
    return running[-1] if running else mine[0]


def _kill(record: Mapping[str, Any], at: float, y: float, seconds: float) -> str:
    """A --kill's mark: a red cross."""
    cross = f"M{at - 5:.1f},{y:.1f}l10,10m0,-10l-10,10"
    replica, signal = record.get("replica"), record.get("signal")
    return element(
        "g",
        title(f"--kill {replica} ({signal}) at {seconds:.1f} s")
        + element("path", d=cross, stroke="#cf222e", stroke_width=2.5),
        class_="mark kill",
        data_replica=replica,
        data_signal=signal,
    )


def _restart(record: Mapping[str, Any], at: float, y: float) -> str:
    """A restart's mark: a purple triangle where the new attempt's process was launched."""
    replica, attempt = record.get("replica"), record.get("attempt")
    return element(
        "g",
        title(f"{replica} restarted (attempt {attempt})")
        + element("path", d=f"M{at:.1f},{y:.1f}l8,8l-8,8z", fill="#6e40c9"),
        class_="mark restart",
        data_replica=replica,
        data_attempt=attempt,
    )


def _lane(
    replica: str,
    attempt: int,
    records: Sequence[Mapping[str, Any]],
    y: float,
    x: Scale,
    begin: float,
    per_step: float,
) -> str:
    """One process's lane: its phases as bars, its events as marks."""
    at: dict[str, float | None] = {
        e: next((float(r["t"]) for r in records if r["e"] == e), None)
        for e in (START, READY, FIRST_STEP)
    }
    steps = [r for r in records if r["e"] in (FIRST_STEP, STEP)]
    start = at[START] if at[START] is not None else _started(records)
    last = max(r["t"] for r in records) if records else start
    first_step = at[FIRST_STEP]
    first = first_step - per_step if first_step is not None else None
    trained_to = max((r["t"] for r in steps), default=None)
    phases = [("startup", start, at[READY] or first or last, "#9aa5b1")]
    if at[READY] is not None:
        phases.append(("waiting", at[READY], first if first is not None else last, "#e3b341"))
    if first is not None and trained_to is not None:
        phases.append(("training", first, trained_to, "#2e9d5b"))
        phases.append(("after", trained_to, last, "#d9dde2"))
    body = [element("text", escape(f"{replica} #{attempt}"), x=4.0, y=y + 14)]
    for name, a, b, colour in phases:
        if b is not None and a is not None and b > a:
            body.append(
                element(
                    "rect",
                    title(f"{replica} #{attempt}: {name}, {b - a:.1f} s"),
                    x=x(a - begin),
                    y=y + 2,
                    width=max(0.5, x(b - begin) - x(a - begin)),
                    height=LANE - 8,
                    fill=colour,
                    class_=f"phase {name}",
                )
            )
    marks = {COMMIT: "commit", PREEMPT_COMMIT: "preempt", SIGTERM: "preempt", RESUME: "resume"}
    for record in records:
        kind = marks.get(record["e"])
        if kind is None:
            continue
        px = x(record["t"] - begin)
        what = record["e"].replace("_", " ")
        tip = title(
            f"{what}"
            + (f" of step {record['step']}" if "step" in record else "")
            + f" at {record['t'] - begin:.1f} s"
        )
        shape = (
            # A tick on the bar's top edge: the bar stays visible between frequent commits.
            element("line", x1=px, x2=px, y1=y - 2, y2=y + 6, stroke="#1f2328", stroke_width=1.5)
            if kind == "commit"
            else element(
                "circle",
                cx=px,
                cy=y + LANE / 2 - 2,
                r=4.5,
                fill={"preempt": "#bf8700", "resume": "#6e40c9"}[kind],
            )
        )
        body.append(element("g", tip + shape, class_=f"mark {kind}", data_step=record.get("step")))
    return element("g", "".join(body), class_="lane", data_replica=replica, data_attempt=attempt)

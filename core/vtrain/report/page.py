"""A report as one self-contained HTML page: inline CSS and SVG, no script, nothing fetched.

A job's page: the verdict, goodput and its breakdown, the timeline (a lane per
replica and attempt, marks for commits, kills, preemptions, restarts and resumes),
each metric over steps (a line per attempt), and a failed job's last log lines. A
study's page: each trial's metric against each parameter, and the trials over time.
Every shape carries its class and data-* attributes, which the tests read in a
browser, and a tooltip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from vtrain.report.gather import JobData, StudyData
from vtrain.report.svg import Scale, element, polyline, svg, ticks, title
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
from vtrain.timeline.goodput import Breakdown, step_time

WIDTH, LANE, LEFT, TOP = 1000.0, 26.0, 130.0, 24.0
PARTS = {
    "productive": ("trained", "#2e9d5b"),
    "startup": ("start-up", "#9aa5b1"),
    "waiting": ("waiting", "#e3b341"),
    "checkpoints": ("checkpoints", "#4a7bd0"),
    "lost": ("lost to failures", "#d1495b"),
    "redone": ("redone steps", "#f08a4b"),
    "other": ("other", "#d9dde2"),
}
"""Each part of the time: its name and colour (training, green; losses, warm)."""
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1080px;color:#1f2328}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.muted{color:#656d76}.ready{color:#1a7f37}.not-ready{color:#cf222e}
.figure{font-size:40px;font-weight:600;margin:0}
table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.swatch{display:inline-block;width:10px;height:10px;margin-right:6px}
pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px}
svg text{font:11px system-ui,sans-serif;fill:#1f2328}
"""


def page(data: JobData | StudyData) -> str:
    """The report's HTML."""
    if isinstance(data, StudyData):
        return _html(f"vtrain report: study {data.name}", _study(data))
    return _html(f"vtrain report: {data.name}", _job(data))


def _html(heading: str, body: Iterable[str]) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{escape(heading)}</title><style>{CSS}</style></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )


# -- a job ---------------------------------------------------------------------------------


def _job(data: JobData) -> Iterable[str]:
    yield element("h1", escape(f"Job {data.name}"))
    yield element("p", escape(data.uri), class_="muted")
    yield from _verdict(data.verdict)
    found = data.timeline.goodput
    yield element("h2", "Goodput")
    if found is None:
        yield element("p", "No timeline with a step in this folder: no goodput.", class_="muted")
    else:
        yield from _goodput(found.job, found.leader)
        rows = "".join(
            element(
                "tr",
                element("td", escape(replica))
                + element("td", f"{part.goodput:.0%}", class_="n")
                + element("td", f"{part.productive:.1f} s", class_="n"),
                class_="replica-goodput",
                data_replica=replica,
            )
            for replica, part in found.replicas.items()
        )
        head = "".join(element("th", h) for h in ("replica", "goodput", "trained"))
        yield element("table", element("tr", head) + rows, id="replicas")
    yield element("h2", "Timeline")
    if data.timeline.lanes:
        yield _timeline(data)
    else:
        yield element("p", "No timeline in this folder.", class_="muted")
    yield element("h2", "Metrics")
    if not data.series:
        yield element("p", "No metric was tracked or reported.", class_="muted")
    for name, values in sorted(data.series.items()):
        yield _metric(name, values)
    if data.logs:
        yield element("h2", "Last lines of each replica")
        for replica, lines in data.logs.items():
            yield element("h3", escape(replica))
            yield element("pre", escape("\n".join(lines)), class_="log", data_replica=replica)


def _verdict(verdict: Mapping[str, Any] | None) -> Iterable[str]:
    yield element("h2", "Verdict")
    if verdict is None:
        yield element("p", "No verdict in this folder (a rehearsal keeps one).", class_="muted")
        return
    ready = bool(verdict.get("ready"))
    said = "ready to submit" if ready else "not ready to submit"
    yield element("p", said, id="verdict", class_="ready" if ready else "not-ready")
    items = [
        element("li", escape(f"{f['check']} ({f['replica']}): {f['detail']}"), class_="finding")
        for f in verdict.get("findings", [])
    ]
    for kind in ("notes", "not_checked", "not_rehearsed"):
        items += [
            element("li", escape(f"{kind.replace('_', ' ')}: {text}"), class_=kind)
            for text in verdict.get(kind, [])
        ]
    if items:
        yield element("ul", "".join(items))


def _goodput(job: Breakdown, leader: str) -> Iterable[str]:
    yield element(
        "p", f"{job.goodput:.0%}", id="goodput", class_="figure", data_goodput=f"{job.goodput:.6f}"
    )
    yield element(
        "p",
        escape(
            f"{job.productive:.1f} s of {job.wall:.1f} s trained ({leader}'s, the job's leader)"
        ),
        class_="muted",
    )
    x, bars = 0.0, []
    for part, (name, colour) in PARTS.items():
        seconds = getattr(job, part)
        width = seconds / job.wall * WIDTH if job.wall > 0 else 0.0
        if width > 0:
            tip = title(f"{name}: {seconds:.1f} s ({seconds / job.wall:.0%})")
            bars.append(
                element("rect", tip, x=x, y=0.0, width=width, height=18.0, fill=colour, class_=part)
            )
        x += width
    yield svg(WIDTH, 18, bars, id="breakdown")
    rows = "".join(
        element(
            "tr",
            element("td", element("span", "", class_="swatch", style=f"background:{colour}") + name)
            + element("td", f"{getattr(job, part):.1f} s", class_="n")
            + element("td", f"{getattr(job, part) / job.wall:.1%}" if job.wall else "", class_="n"),
            data_part=part,
        )
        for part, (name, colour) in PARTS.items()
    )
    yield element("table", rows, id="parts")


def _timeline(data: JobData) -> str:
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
            element("line", x1=px, x2=px, y1=y, y2=y + LANE - 4, stroke="#1f2328", stroke_width=1.5)
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


def _metric(name: str, values: Sequence[tuple[int, float, int]]) -> str:
    """One metric over steps: a line per attempt (a step redone shows both, each its own)."""
    height, left = 130.0, 70.0
    steps = [s for s, _, _ in values]
    numbers = [v for _, v, _ in values if v == v and abs(v) != float("inf")]
    if not numbers:
        return element("p", escape(f"{name}: no finite value"), class_="muted")
    if len(set(steps)) == 1:  # one value (a final metric): a line of text, not a chart
        shown = ", ".join(f"{v:.6g} (attempt {a})" if a else f"{v:.6g}" for _, v, a in values)
        text = f"{name} at step {steps[0]}: {shown}"
        return element("p", escape(text), class_="metric-value", data_metric=name)
    x = Scale(min(steps), max(steps), left, WIDTH - 10)
    y = Scale(min(numbers), max(numbers), height - 20, 10)
    shapes = [element("text", escape(name), x=left, y=10.0)]
    for tick in ticks(Scale(min(numbers), max(numbers), 0, 1), 3):
        shapes.append(element("text", f"{tick:g}", x=4.0, y=y(tick) + 4))
    colours = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700"]
    for i, attempt in enumerate(sorted({a for _, _, a in values})):
        points = sorted(
            (s, v) for s, v, a in values if a == attempt and v == v and abs(v) != float("inf")
        )
        if not points:
            continue
        colour = colours[i % len(colours)]
        drawn = [(x(s), y(v)) for s, v in points]
        shapes.append(
            element(
                "g",
                title(f"{name}, attempt {attempt}: steps {points[0][0]} to {points[-1][0]}")
                + polyline(drawn, fill="none", stroke=colour, stroke_width=1.5)
                + "".join(element("circle", cx=px, cy=py, r=1.8, fill=colour) for px, py in drawn),
                class_="series",
                data_attempt=attempt,
            )
        )
    shapes.append(element("text", f"step {min(steps)} to {max(steps)}", x=left, y=height - 4))
    return svg(WIDTH, height, shapes, class_="metric", data_metric=name)


# -- a study -------------------------------------------------------------------------------


def _study(data: StudyData) -> Iterable[str]:
    study = data.study
    trials = study.get("trials", [])
    metric = (study.get("study", {}).get("metrics") or [{}])[0].get("metric_id", "metric")
    yield element("h1", escape(f"Study {data.name}"))
    yield element(
        "p", escape(f"{data.uri}: {study.get('status', '')}, {len(trials)} trials"), class_="muted"
    )
    done = [t for t in trials if isinstance(t.get("final_metric"), (int, float))]
    names = sorted({p for t in trials for p in t.get("parameters", {})})
    yield element("h2", escape(f"{metric} against each parameter"))
    for name in names:
        yield _scatter(
            name,
            metric,
            [(t["parameters"].get(name), t["final_metric"], t["trial_id"]) for t in done],
        )
    yield element("h2", "Trials over time")
    yield _trials(trials)
    rows = "".join(
        element(
            "tr",
            element("td", escape(str(t.get("trial_id"))))
            + element("td", escape(str(t.get("status"))))
            + element(
                "td",
                "" if t.get("final_metric") is None else f"{t['final_metric']:.6g}",
                class_="n",
            )
            + element(
                "td", escape(", ".join(f"{k}={v}" for k, v in t.get("parameters", {}).items()))
            ),
            class_="trial",
            data_trial=t.get("trial_id"),
        )
        for t in trials
    )
    head = "".join(element("th", h) for h in ("trial", "status", metric, "parameters"))
    yield element("table", element("tr", head) + rows, id="trials")


def _scatter(name: str, metric: str, points: Sequence[tuple[Any, float, str]]) -> str:
    height, left = 180.0, 60.0
    numeric = all(isinstance(p, (int, float)) for p, _, _ in points)
    labels = sorted({str(p) for p, _, _ in points})
    xs = [float(p) if numeric else labels.index(str(p)) for p, _, _ in points]
    if not points:
        return element("p", escape(f"{name}: no finished trial"), class_="muted")
    x = Scale(min(xs), max(xs), left + 10, WIDTH - 20)
    y = Scale(min(v for _, v, _ in points), max(v for _, v, _ in points), height - 24, 12)
    shapes = [element("text", escape(f"{metric} by {name}"), x=left, y=10.0)]
    for (p, v, trial), px in zip(points, xs, strict=True):
        shapes.append(
            element(
                "circle",
                title(f"trial {trial}: {name}={p}, {metric}={v:.6g}"),
                cx=x(px),
                cy=y(v),
                r=5.0,
                fill="#0969da",
                class_="trial-point",
                data_trial=trial,
            )
        )
    shapes.append(
        element(
            "text",
            escape(
                f"{name}: {min(xs):g} to {max(xs):g}" if numeric else f"{name}: {', '.join(labels)}"
            ),
            x=left,
            y=height - 4,
        )
    )
    return svg(WIDTH, height, shapes, class_="scatter", data_parameter=name)


def _trials(trials: Sequence[Mapping[str, Any]]) -> str:
    timed = [t for t in trials if t.get("started_at") is not None]
    if not timed:
        return element("p", "No trial has started.", class_="muted")
    begin = min(t["started_at"] for t in timed)
    end = max(t["started_at"] + (t.get("duration_s") or 0) for t in timed)
    x = Scale(0.0, max(end - begin, 1e-3), LEFT, WIDTH - 10)
    shapes = []
    colours = {"SUCCEEDED": "#2e9d5b", "FAILED": "#d1495b", "INFEASIBLE": "#f08a4b"}
    for row, t in enumerate(timed):
        y = TOP + row * LANE
        a = t["started_at"] - begin
        b = a + (t.get("duration_s") or 0)
        shapes.append(element("text", escape(f"trial {t['trial_id']}"), x=4.0, y=y + 14))
        shapes.append(
            element(
                "rect",
                title(f"trial {t['trial_id']}: {t.get('status')}, {b - a:.1f} s"),
                x=x(a),
                y=y + 2,
                width=max(0.5, x(b) - x(a)),
                height=LANE - 8,
                fill=colours.get(str(t.get("status")), "#9aa5b1"),
                class_="trial-bar",
                data_trial=t["trial_id"],
            )
        )
    return svg(WIDTH, TOP + LANE * len(timed) + 8, shapes, id="trials-over-time")

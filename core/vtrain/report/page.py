"""A report as one self-contained HTML page: inline CSS and SVG, no script, nothing fetched.

A job's page: the verdict, goodput and its breakdown, the timeline
(`vtrain.report.timeline_svg`), each metric over steps (a line per attempt), and a
failed job's last log lines. A study's page is `vtrain.report.study_page`'s.
Every shape carries its class and data-* attributes, which the tests read in a
browser, and a tooltip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from vtrain.report.gather import JobData, StudyData
from vtrain.report.study_page import study_sections
from vtrain.report.svg import Scale, element, polyline, svg, ticks, title
from vtrain.report.timeline_svg import WIDTH, timeline_svg
from vtrain.timeline.goodput import Breakdown

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
        return _html(f"vtrain report: study {data.name}", study_sections(data))
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
        yield timeline_svg(data)
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

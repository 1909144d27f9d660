"""A study's report: each trial's metric against each parameter, and the trials over time."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from vtrain.report.gather import StudyData
from vtrain.report.svg import Scale, element, svg, title
from vtrain.report.timeline_svg import LANE, LEFT, TOP, WIDTH


def study_sections(data: StudyData) -> Iterable[str]:
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

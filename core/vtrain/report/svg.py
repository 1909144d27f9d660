"""SVG drawn in Python: the few shapes a report needs, escaped, with a linear scale (pure).

Why not a charting library: a report must open offline, years later, from a bucket,
with nothing fetched and nothing to build; a few hundred lines of SVG text do that,
and the tests read the very elements (classes, data-* attributes) a person sees.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from html import escape

Point = tuple[float, float]


class Scale:
    """A linear map of [low, high] onto [start, stop] (a flat range maps to the middle)."""

    def __init__(self, low: float, high: float, start: float, stop: float) -> None:
        self.low, self.high, self.start, self.stop = low, high, start, stop

    def __call__(self, value: float) -> float:
        if self.high == self.low:
            return (self.start + self.stop) / 2
        return self.start + (value - self.low) / (self.high - self.low) * (self.stop - self.start)


def attrs(values: Mapping[str, object]) -> str:
    """` name="value"` for each attribute that is not None (`_` in a name becomes `-`)."""
    return "".join(
        f' {k.rstrip("_").replace("_", "-")}="{escape(_text(v))}"'
        for k, v in values.items()
        if v is not None
    )


def _text(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def element(name: str, body: str = "", **values: object) -> str:
    """`<name attrs>body</name>`."""
    return f"<{name}{attrs(values)}>{body}</{name}>"


def title(text: str) -> str:
    """A tooltip: what a pointer over the shape shows."""
    return element("title", escape(text))


def svg(width: float, height: float, body: Iterable[str], **values: object) -> str:
    """An inline SVG of `width` x `height` user units, scaling to its container's width."""
    return element(
        "svg",
        "".join(body),
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {width:.0f} {height:.0f}",
        width="100%",
        role="img",
        **values,
    )


def polyline(points: Sequence[Point], **values: object) -> str:
    """A line through `points`."""
    drawn = " ".join(f"{x:.2f},{y:.2f}" for x, y in points)
    return element("polyline", "", points=drawn, **values)


def ticks(scale: Scale, count: int = 5) -> list[float]:
    """About `count` round values across the scale's range."""
    span = scale.high - scale.low
    if span <= 0:
        return [scale.low]
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = (scale.low // step + (scale.low % step > 0)) * step
    found: list[float] = []
    value = first
    while value <= scale.high + 1e-9 and len(found) < 50:
        found.append(round(value, 10))
        value += step
    return found

"""The `metric` check: the study's metric never reported under its id."""

from __future__ import annotations

from vtrain.local.checks import snippets
from vtrain.local.checks.reports import tags
from vtrain.local.evidence import Evidence
from vtrain.local.verdict import Finding


def metric(ev: Evidence) -> list[Finding]:
    """The study's metric id never reported, or reported only under other tags."""
    if not ev.metric_id:
        return []
    seen: set[str] = set()
    for path in ev.metric_files.values():
        seen |= tags(path)
    if ev.metric_id in seen:
        return []
    others = f" (tags seen: {', '.join(sorted(seen))})" if seen else " (nothing was reported)"
    return [
        Finding(
            "metric",
            next(iter(ev.hosts)),
            f"the study's metric {ev.metric_id!r} was never reported{others}: every trial "
            "would end without a value",
            f"report it under {ev.metric_id!r} ({snippets.report(ev.metric_id)})",
        )
    ]

"""Side-by-side reporting shared by the benchmarks: medians, and the ratio against the baseline."""

from __future__ import annotations

import statistics
from collections.abc import Mapping


def report(
    title: str,
    results: Mapping[str, list[float]],
    *,
    unit: str,
    ours: str,
    theirs: str,
    target: str,
) -> float:
    """Print each contender's median and `ours / theirs`; return that ratio."""
    runs = min(len(v) for v in results.values())
    print(f"{title} (median of {runs}):")
    for name, values in results.items():
        print(f"  {name:<34}{statistics.median(values):9.2f} {unit}")
    ratio = statistics.median(results[ours]) / statistics.median(results[theirs])
    print(f"  {ours} / {theirs}: {ratio:.3f}x (target {target})")
    return ratio

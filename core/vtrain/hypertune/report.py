"""`report()`: write the tuning metric where the platform reads it, the way it reads it.

Unlike cloudml-hypertune, each report writes a temp file and renames it over
the metric file (readers never see a torn file), keeps the last 100 lines in
memory (a report costs the same whether it is the first or the ten-thousandth),
creates the folder without racing other processes, accepts a bare file name,
refuses a symlink at the metric path, and writes from the chief only unless
asked otherwise (the leader: the chief, unless a plugin exported another).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Mapping

from vtrain.cluster import ClusterInfo
from vtrain.cluster.leader import leads
from vtrain.context import DEFAULT_METRIC_FILE, DEFAULT_METRIC_TAG
from vtrain.errors import StorageError, UsageError
from vtrain.hypertune.atomic import write_atomic
from vtrain.hypertune.metric_file import (
    MAX_ENTRIES,
    RESERVED_KEYS,
    encode,
    make_entry,
    read_entries,
)

_WHERE = "vtrain.hypertune.report"


class MetricFile:
    """The last 100 lines of one metric file, held in memory and rewritten atomically."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lines: deque[str] | None = None
        self._lock = threading.Lock()

    def append(self, entry: Mapping[str, str | float]) -> None:
        """Add one entry and replace the file with the last 100."""
        line = encode(entry)
        with self._lock:
            if self._lines is None:
                self._lines = self._seed()
            self._lines.append(line)
            write_atomic(self.path, "".join(self._lines).encode())

    def _seed(self) -> deque[str]:
        # Read once: a restarted replica keeps what its earlier run reported, and later
        # reports never parse the file again.
        directory = os.path.dirname(self.path)
        if directory:
            try:
                os.makedirs(directory, exist_ok=True)
            except OSError as e:
                raise StorageError(
                    f"cannot create the metric file's folder ({e.strerror or e})",
                    source="CLOUD_ML_HP_METRIC_FILE",
                    value=self.path,
                    expected="a path whose folders can be created",
                ) from None
        lines = (encode(e) for e in read_entries(self.path))
        return deque(lines, maxlen=MAX_ENTRIES)


_files: dict[str, MetricFile] = {}
_files_lock = threading.Lock()
# A forked child reseeds from the file rather than trusting a copy that may hold a lock.
os.register_at_fork(after_in_child=_files.clear)


def _metric_file(path: str) -> MetricFile:
    key = os.path.abspath(path)
    with _files_lock:
        found = _files.get(key)
        if found is None:
            found = _files[key] = MetricFile(key)
        return found


def report(
    value: float,
    tag: str | None = None,
    step: int | None = None,
    checkpoint_path: str = "",
    *,
    environ: Mapping[str, str] | None = None,
    all_replicas: bool = False,
) -> bool:
    """Report the tuning metric; returns False, writing nothing, on a replica that does not lead.

    The file is `CLOUD_ML_HP_METRIC_FILE` (default /tmp/hypertune/output.metrics),
    the tag `tag`, else `CLOUD_ML_HP_METRIC_TAG`, else training/hptuning/metric,
    the trial `CLOUD_ML_TRIAL_ID` (default "0"). `all_replicas=True` writes from
    every replica; give each its own file then, or the last writer wins.
    """
    env = os.environ if environ is None else environ
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(
            "the metric is not a number",
            source=_WHERE,
            path="value",
            value=value,
            expected="a float, or anything float() accepts",
        ) from None
    tag = tag or env.get("CLOUD_ML_HP_METRIC_TAG") or DEFAULT_METRIC_TAG
    if not isinstance(tag, str) or tag in RESERVED_KEYS:
        raise UsageError(
            "the tag cannot be used",
            source=_WHERE,
            path="tag",
            value=tag,
            expected="a string other than " + ", ".join(sorted(RESERVED_KEYS)),
        )
    try:
        step = None if step is None else int(step)
    except (TypeError, ValueError):
        raise UsageError(
            "the step is not an integer",
            source=_WHERE,
            path="step",
            value=step,
            expected="an int or None",
        ) from None
    if not all_replicas and not leads(ClusterInfo.from_env(env), env):
        return False
    entry = make_entry(
        tag=tag,
        value=number,
        trial=env.get("CLOUD_ML_TRIAL_ID", "0"),
        step=step,
        checkpoint_path=str(checkpoint_path),
        timestamp=time.time(),
    )
    _metric_file(env.get("CLOUD_ML_HP_METRIC_FILE") or DEFAULT_METRIC_FILE).append(entry)
    return True

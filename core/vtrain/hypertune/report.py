"""`report()`: write the tuning metric where the platform reads it, the way it reads it.

Unlike cloudml-hypertune, each report writes a temp file and renames it over
the metric file (readers never see a torn file), keeps the last 100 lines in
memory (a report costs the same whether it is the first or the ten-thousandth),
creates the folder without racing other processes, accepts a bare file name,
refuses a symlink at the metric path, and writes from the chief only unless
asked otherwise (the leader: the chief, unless a plugin exported another).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import deque
from collections.abc import Mapping

from vtrain.cluster import ClusterInfo
from vtrain.cluster.leader import leads
from vtrain.context import DEFAULT_METRIC_TAG, metric_file_path
from vtrain.errors import StorageError, UsageError
from vtrain.hypertune.metric_file import (
    MAX_ENTRIES,
    RESERVED_KEYS,
    encode,
    make_entry,
    read_entries,
)
from vtrain.storage.atomic import write_atomic

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
    """Report `value`, the tuning metric; returns False, writing nothing, on a replica that
    does not lead.

    `step` (an int, the step it was measured at) and `checkpoint_path` are written
    beside it, as cloudml-hypertune writes them; variables are read from `environ`
    (default `os.environ`). The file is `CLOUD_ML_HP_METRIC_FILE`; unset,
    /tmp/hypertune/output.metrics on a platform, where the tuning service reads it,
    and the run's own folder's hypertune/output.metrics in a run alone. The tag is
    `tag`, else `CLOUD_ML_HP_METRIC_TAG`, else training/hptuning/metric, the trial
    `CLOUD_ML_TRIAL_ID` (default "0"). `all_replicas=True` writes from every
    replica; give each its own file then, or the last writer wins.

    The value must be a finite number: NaN, an infinity, "1e400" or an int beyond
    float's range raise `UsageError` naming the tag, and nothing is written. A
    diverged trial should end with a non-zero exit instead, which fails it; `vtrain
    tune` marks a trial whose metric file holds a non-finite value INFEASIBLE.
    """
    env = os.environ if environ is None else environ
    tag = tag or env.get("CLOUD_ML_HP_METRIC_TAG") or DEFAULT_METRIC_TAG
    if not isinstance(tag, str) or tag in RESERVED_KEYS:
        raise UsageError(
            "the tag cannot be used",
            source=_WHERE,
            path="tag",
            value=tag,
            expected="a string other than " + ", ".join(sorted(RESERVED_KEYS)),
        )
    number = _metric(value, tag)
    step = _step(step)
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
    _metric_file(metric_file_path(env)).append(entry)
    return True


# `step` goes into the file as the string of an int; int64 is what readers of it take.
_MAX_STEP = 2**63 - 1
# repr() of an int of more than 4300 digits raises ValueError; about 14,000 bits is below that.
_MAX_QUOTED_BITS = 14_000


def _quotable(value: object) -> object:
    """`value`, or a description of it where an error could not quote it."""
    if isinstance(value, int) and value.bit_length() > _MAX_QUOTED_BITS:
        return f"an int of {value.bit_length()} bits"
    return value


def _metric(value: object, tag: str) -> float:
    """`value` as a finite float, or a UsageError that names the tag."""
    try:
        if isinstance(value, str) and not value.isascii():
            raise ValueError(value)  # float() takes '١٫٥' too
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:  # an int beyond float's range
        number = math.inf
    except (TypeError, ValueError):
        raise UsageError(
            "the metric is not a number",
            source=_WHERE,
            path="value",
            value=value,
            expected="a float, or anything float() accepts",
        ) from None
    if not math.isfinite(number):
        raise UsageError(
            f"the metric {tag!r} is not a finite number",
            source=_WHERE,
            path="value",
            value=_quotable(value),
            expected="a finite float",
            hint="a NaN or infinite loss means training diverged: end the trial with a non-zero "
            "exit status to fail it, or report a finite value",
        )
    return number


def _step(step: object) -> int | None:
    """`step` as an int64, None when absent."""
    if step is None:
        return None
    number: int | None
    try:
        if isinstance(step, str) and not step.isascii():
            raise ValueError(step)  # int() takes '١٢' too
        number = int(step)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(inf)
        number = None
    if number is None or not -_MAX_STEP <= number <= _MAX_STEP:
        raise UsageError(
            "the step is not an integer",
            source=_WHERE,
            path="step",
            value=_quotable(step),
            expected="an int from -2**63 to 2**63 - 1, or None",
        )
    return number

"""Framework noise: the lines that tell a user of `vtrain local run` nothing, kept off its console.

TensorFlow's native libraries print a banner as each loads (absl's note about its
own start, oneDNN, "Could not find cuda drivers", the CPU instructions it was not
built for), Lightning prints its tips and the accelerators it did not find, and a
retracing warning comes again at every retrace. With five replicas they bury what
the job says. Such a line goes to its replica's log alone, unless `--verbose`.

Two tested lists decide: NOISE (hidden) and ALWAYS_SHOWN, which wins over it: a
traceback, an error, NCCL and gloo, vtrain's own lines. A line in neither list is
shown, whatever its level: only a line known to say nothing is hidden. REPEATS are
hidden from their second time in the job on (numbers and addresses aside). A stuck
trainer's stack dump (`vtrain.progress.dump`) goes to its log alone too: the console
has its watchdog's line, which says what it waited for.
"""

from __future__ import annotations

import re

from vtrain.progress.dump import is_stack_line

# The prefix of a native library's line: absl's (level, date, time, thread, file:line), or
# TensorFlow's own before 2.17 (date, time, level, file:line). `I` is INFO.
_NATIVE = rb"(?:[IWEF]\d{4} [\d:.]+\s+\d+|\d{4}-\d\d-\d\d [\d:.]+: [IWEF]) [\w./-]+:\d+\] "
_INFO = rb"(?:I\d{4} [\d:.]+\s+\d+|\d{4}-\d\d-\d\d [\d:.]+: I) [\w./-]+:\d+\] "

NOISE: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    (
        "absl's note on its own start",
        re.compile(rb"WARNING: All log messages before absl::InitializeLog\(\) is called"),
    ),
    ("an INFO line of TensorFlow's native libraries", re.compile(_INFO)),
    (
        "the end of TensorFlow's CPU-instructions banner",
        re.compile(rb"To enable the following instructions: .* rebuild TensorFlow with"),
    ),
    (
        "a CUDA library registered twice (TensorFlow with JAX or torch)",
        re.compile(_NATIVE + rb"Unable to register cu(DNN|FFT|BLAS) factory"),
    ),
    (
        "XLA's computation placer registered twice",
        re.compile(_NATIVE + rb"computation placer already registered"),
    ),
    ("TensorFlow on a machine without GPU", re.compile(rb"Could not find cuda drivers on your")),
    ("Lightning's tips", re.compile(rb"(\xf0\x9f\x92\xa1 )?Tip: .*(install|lightning|Lit)")),
    ("the accelerators Lightning did not use", re.compile(rb"(GPU|TPU|HPU|IPU) available: ")),
)
"""(what it is, a pattern found at the line's start): a line that tells a user nothing."""

REPEATS: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    (
        "a tf.function retracing warning",
        re.compile(rb"WARNING:tensorflow:.*triggered tf\.function retracing"),
    ),
)
"""(what it is, a pattern found anywhere): shown once in a job; its repeats are noise."""

ALWAYS_SHOWN: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("a Python traceback", re.compile(rb"Traceback \(most recent call last\)")),
    ("a Python exception", re.compile(rb"\b[A-Z]\w*(Error|Exception|Interrupt)\b")),
    ("an error", re.compile(rb"(?i)\berror\b|\bfailed\b|\bfailure\b")),
    ("a fatal native error", re.compile(rb"(?i)\bfatal\b|^F\d{4} |Check failed|Segmentation")),
    ("NCCL", re.compile(rb"(?i)nccl")),  # ProcessGroupNCCL too
    ("gloo", re.compile(rb"(?i)gloo")),
    ("vtrain's own line", re.compile(rb"vtrain")),
    ("out of memory", re.compile(rb"(?i)out of memory|\bOOM\b")),
)
"""(what it is, a pattern found anywhere): a line that reaches the console whatever NOISE says."""

# Numbers and addresses (`5 out of the last 5 calls to <function f at 0x7f..>`) vary by repeat.
_VARYING = re.compile(rb"0x[0-9a-fA-F]+|\d+")


def shown(line: bytes) -> bool:
    """True when `line` must reach the console (ALWAYS_SHOWN)."""
    return any(pattern.search(line) for _, pattern in ALWAYS_SHOWN)


def noise(line: bytes) -> bool:
    """True when `line` is in NOISE and not ALWAYS_SHOWN: its replica's log alone gets it."""
    plain = line.strip()
    return any(p.match(plain) for _, p in NOISE) and not shown(plain)


def repeat_key(line: bytes) -> bytes | None:
    """What a repeat of `line` has in common with it, when `line` is in REPEATS; else None."""
    if not any(pattern.search(line) for _, pattern in REPEATS) or shown(line):
        return None
    return _VARYING.sub(b"#", line.strip())


class Noise:
    """Which of a job's replica lines the console gets: all but the noise (`verbose`: all)."""

    def __init__(self, verbose: bool = False) -> None:
        self._verbose = verbose
        self._seen: set[bytes] = set()

    def hides(self, line: bytes) -> bool:
        """True when the console does not get `line` (its replica's log has it)."""
        if self._verbose:
            return False
        if noise(line) or is_stack_line(line):  # a stuck trainer's dump: its log has it
            return True
        key = repeat_key(line)
        if key is None:
            return False
        if key in self._seen:
            return True
        self._seen.add(key)
        return False

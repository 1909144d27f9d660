"""What marking progress costs a training loop (issue 45): a mark, and a loop of 10 ms steps.

    python bench/progress_cost.py [--steps 300] [--runs 5] [--keras]

First the price of one mark, as the plugins' helpers make it (`tracker().stepped(...)`,
`.batch()`, `.alive()`, with the process check `tracker()` does), in nanoseconds. Then
one loop of --steps steps of 10 ms each (busy, as a step on the CPU is), timed alone and
with a mark per step while the watchdog's thread looks once a second and rewrites a
progress file, as in `vtrain local run`; figures are medians over --runs rounds, the two
loops taking turns. With --keras (TensorFlow installed), the same side by side for
`fit` of a tiny model (about 1 ms a step, the worst case) with and without the progress
callback of `handle.callbacks()`, in Keras 3 and tf-keras (a child process each), and
the time Keras takes to call its batch hooks: what the callback adds to a step, without
the noise of the steps around it (on a busy 2-core machine fit's own times vary by 10%).

Target: a mark is a few attribute writes (well under a microsecond); the loop with marks
and a watchdog within 1% of the loop without.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "core"))

from vtrain.progress import tracker  # noqa: E402 (after the path)
from vtrain.progress.bound import Settings  # noqa: E402
from vtrain.progress.watchdog import Watchdog  # noqa: E402

STEP = 0.010


def per_mark(count: int = 200_000) -> dict[str, float]:
    """Nanoseconds per call of each mark."""
    found = {}
    for name, mark in (
        ("tracker()", tracker),
        ("tracker().stepped(n)", lambda: tracker().stepped(7)),
        ("tracker().batch()", lambda: tracker().batch()),
        ("tracker().alive()", lambda: tracker().alive()),
    ):
        start = time.perf_counter()
        for _ in range(count):
            mark()
        found[name] = (time.perf_counter() - start) / count * 1e9
    return found


def loop(steps: int, mark: bool) -> float:
    """Seconds for `steps` busy steps of STEP seconds, marking each or not."""
    progress = tracker()
    start = time.perf_counter()
    for step in range(1, steps + 1):
        end = time.perf_counter() + STEP
        while time.perf_counter() < end:
            pass
        if mark:
            progress.stepped(step)
    return time.perf_counter() - start


KERAS = textwrap.dedent(
    """
    import statistics, time, timeit
    import numpy as np
    import tensorflow as tf
    from vtrain_tensorflow.keras_callbacks import progress_callback
    keras = tf.keras
    x = np.random.default_rng(0).normal(size=(32 * 500, 8)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = keras.Sequential(
        [keras.Input(shape=(8,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(32).repeat()
    model.fit(data, steps_per_epoch=200, epochs=1, verbose=0)
    def fit(callbacks):
        start = time.perf_counter()
        model.fit(data, steps_per_epoch=500, epochs=2, verbose=0, callbacks=callbacks)
        return (time.perf_counter() - start) / 1000
    without, marked = [], []
    for _ in range(RUNS):
        without.append(fit([]))
        marked.append(fit([progress_callback(keras)]))
    a, b = statistics.median(without), statistics.median(marked)
    print(f"fit: {a * 1e6:.0f} us/step without, {b * 1e6:.0f} us/step with: ratio {b / a:.3f}")
    # What the callback adds to each step alone: Keras' dispatch of the batch hooks to it.
    logs = {"loss": tf.constant(1.0)}
    def hooks(callbacks):
        listed = keras.callbacks.CallbackList(callbacks, add_history=True, model=model, steps=9)
        listed.on_train_begin()
        listed.on_epoch_begin(0)
        def step():
            listed.on_train_batch_begin(0)
            listed.on_train_batch_end(1, logs)
        for _ in range(10):
            step()  # past tf-keras' check of the first batches' hook times
        return min(timeit.repeat(step, number=2000, repeat=7)) / 2000 * 1e6
    a, b = hooks([]), hooks([progress_callback(keras)])
    print(f"batch hooks: {a:.1f} us/step without, {b:.1f} us/step with: +{b - a:.1f} us")
    """
)


def keras(runs: int) -> None:
    plugin = os.path.join(HERE, "..", "plugins", "tensorflow")
    for name, legacy in (("Keras 3", "0"), ("tf-keras", "1")):
        env = {**os.environ, "TF_USE_LEGACY_KERAS": legacy, "TF_CPP_MIN_LOG_LEVEL": "3"}
        env["PYTHONPATH"] = os.pathsep.join([plugin, os.path.join(HERE, "..", "core")])
        done = subprocess.run(
            [sys.executable, "-c", KERAS.replace("RUNS", str(runs))],
            env=env,
            capture_output=True,
            text=True,
        )
        said = done.stdout.strip().splitlines()[-2:] or [done.stderr.strip()[-300:]]
        for line in said:
            print(f"{name}, {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keras", action="store_true")
    args = parser.parse_args()

    for name, ns in per_mark().items():
        print(f"{name:24} {ns:7.0f} ns")
    settings = Settings(on=True, floor=300.0, multiple=10.0, first_step=2400.0)
    alone, marked = [], []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.runs):
            alone.append(loop(args.steps, mark=False))
            watchdog = Watchdog(tracker(), settings, os.path.join(folder, "progress"))
            watchdog.start()
            marked.append(loop(args.steps, mark=True))
            watchdog.stop()
    a, b = statistics.median(alone), statistics.median(marked)
    print(
        f"{args.steps} steps of {STEP * 1e3:.0f} ms: {a:.3f} s alone, {b:.3f} s marked with a "
        f"watchdog: ratio {b / a:.4f}"
    )
    if args.keras:
        keras(args.runs)


if __name__ == "__main__":
    main()

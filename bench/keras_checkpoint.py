"""Keras `fit` steps per second: handle.model_checkpoint() against a plain ModelCheckpoint.

    python bench/keras_checkpoint.py   # needs pip install -c tests/constraints.txt ".[tensorflow]"
    python bench/keras_checkpoint.py --rounds 9 --steps 200 --epochs 5

One process, Keras 3, one model; both save the full model (.keras) at every
epoch's end into the same local folder: the plain callback its
`ckpt-{epoch:04d}.keras` files, vtrain's committed steps under `keras/`.
Rounds alternate between the two, so a noisy neighbour slows both alike; the
first epoch of each fit (tracing) is left out. Target (issue 14): >= 0.95x.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from compare import report  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def clock(keras: Any, times: list[float]) -> Any:
    """Notes when each epoch begins and when training ends: each interval holds one save."""
    return keras.callbacks.LambdaCallback(
        on_epoch_begin=lambda epoch, logs: times.append(time.perf_counter()),
        on_train_end=lambda logs: times.append(time.perf_counter()),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=5, help="per fit; the first is not timed")
    parser.add_argument("--steps", type=int, default=200, help="batches per epoch")
    args = parser.parse_args()

    import vtrain

    with tempfile.TemporaryDirectory(prefix="vtrain-bench-") as out:
        handle = vtrain.plugins.get("tensorflow").configure(environ={"VTRAIN_OUTPUT_DIR": out})
        import numpy as np
        import tensorflow as tf

        keras = handle.keras
        rng = np.random.default_rng(0)
        x = rng.normal(size=(4096, 64)).astype("float32")
        data = tf.data.Dataset.from_tensor_slices((x, rng.integers(0, 10, 4096))).repeat().batch(32)
        folder = handle.context.checkpoint_dir

        def fit(callback: Any) -> float:
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            layers = [keras.layers.Dense(256, "relu"), keras.layers.Dense(256, "relu")]
            model = keras.Sequential([keras.Input(shape=(64,)), *layers, keras.layers.Dense(10)])
            model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(True))
            times: list[float] = []
            model.fit(
                data,
                epochs=args.epochs,
                steps_per_epoch=args.steps,
                verbose=0,
                callbacks=[callback(), clock(keras, times)],
            )
            return args.steps * (args.epochs - 1) / (times[-1] - times[1])

        plain = os.path.join(folder, "ckpt-{epoch:04d}.keras")
        contenders = {
            "handle.model_checkpoint()": lambda: handle.model_checkpoint(monitor="loss"),
            "keras ModelCheckpoint": lambda: keras.callbacks.ModelCheckpoint(plain),
        }
        speed: dict[str, list[float]] = {name: [] for name in contenders}
        for round_ in range(args.rounds):
            order = list(contenders)[:: 1 if round_ % 2 else -1]  # neither always goes first
            for name in order:
                speed[name].append(fit(contenders[name]))
        report(
            f"Keras fit, {args.steps} steps an epoch, a full-model save every epoch, steps/s",
            speed,
            unit="steps/s",
            ours="handle.model_checkpoint()",
            theirs="keras ModelCheckpoint",
            target=">= 0.95x",
        )


if __name__ == "__main__":
    main()

"""A benchmark replica for Keras: `python keras_job.py vtrain|plain fit|first-step`.

fit: one process, steps per second of `model.fit`, with vtrain's callbacks or none.
first-step: seconds from the launcher's START to this replica's first training batch
under MultiWorkerMirroredStrategy, set up by vtrain or by a hand-written TF_CONFIG.
"""

import os
import sys
import time

setup, work = sys.argv[1], sys.argv[2]
if setup == "vtrain":
    import vtrain

    handle = vtrain.plugins.get("tensorflow").configure()
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

keras = tf.keras
strategy = (
    handle.strategy
    if setup == "vtrain"
    else (
        tf.distribute.MultiWorkerMirroredStrategy()
        if "TF_CONFIG" in os.environ
        else tf.distribute.get_strategy()
    )
)


class Clock(keras.callbacks.Callback):
    """Times epochs after the first, and notes when the first batch starts."""

    def __init__(self) -> None:
        super().__init__()
        self.epoch_times: list[float] = []

    def on_train_batch_begin(self, batch, logs=None):  # type: ignore[no-untyped-def]
        if not hasattr(self, "first"):
            self.first = time.time() - float(os.environ.get("START", "0"))

    def on_epoch_begin(self, epoch, logs=None):  # type: ignore[no-untyped-def]
        self.started = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):  # type: ignore[no-untyped-def]
        self.epoch_times.append(time.perf_counter() - self.started)


with strategy.scope():
    model = keras.Sequential(
        [
            keras.Input(shape=(64,)),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(10),
        ]
    )
    model.compile(
        optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
rng = np.random.default_rng(0)
data = (
    tf.data.Dataset.from_tensor_slices(
        (rng.normal(size=(4096, 64)).astype("float32"), rng.integers(0, 10, 4096))
    )
    .repeat()
    .batch(32)
)
clock = Clock()
callbacks = [clock]
if setup == "vtrain" and work == "fit":
    callbacks += handle.callbacks(monitor="loss")
steps = 200
epochs = 4 if work == "fit" else 1
model.fit(data, epochs=epochs, steps_per_epoch=steps, callbacks=callbacks, verbose=0)
if work == "fit":
    print(f"STEPS_PER_SECOND {steps * (epochs - 1) / sum(clock.epoch_times[1:]):.1f}", flush=True)
else:
    print(f"FIRST_STEP {clock.first:.3f}", flush=True)
